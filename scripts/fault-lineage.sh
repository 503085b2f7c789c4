# The job-outcome lineage's figures for the fault runs (scripts/fault-run.sh, scripts/fault-net.sh), sourced by
# both. Each function reads through the caller's `sql` (one statement; rows on stdout, `|`-separated).

# Spawned jobs without a final outcome (done or dead-lettered): lost, once the crawl drained.
lineage_missing() {
    sql "SELECT count(*) FROM (SELECT DISTINCT jsonb_array_elements_text(spawned) AS id FROM job_outcomes) s WHERE NOT EXISTS (SELECT 1 FROM job_outcomes o WHERE o.job_id = s.id AND o.outcome IN ('done', 'dead-lettered'))"
}

# Outcomes no job lists as spawned, roots aside: a rerun that spawned under other ids than a partly delivered first
# run (child ids derive from the parent, the output's stage and key, and its place among the outputs to that stage).
lineage_orphans() {
    sql "SELECT count(*) FROM job_outcomes o WHERE parent_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM job_outcomes p WHERE p.job_id = o.parent_id AND p.spawned ? o.job_id)"
}

# Dead letters whose reason is a dependency that was down (the store, the image store, the broker), not the job:
# each is a record dead-lettered for an outage, which a stage must pause for instead (docs/stage.md, "What each
# failure is"). Goal: 0.
lineage_dead_lettered_during_outage() {
    sql "SELECT count(*) FROM job_outcomes WHERE outcome = 'dead-lettered' AND coalesce(error, '') ~* '(postgresql|sqlite|image store|the store|broker|kafkaerror|connection pool|circuit breaker)'"
}

# What a failure needs to be found, printed under the report: each lost job (at most 10) with the parent that names
# it, and each stray outcome (at most 5) with its parent's outcome. Arguments: the two counts above.
lineage_details() { # missing orphans
    if (($1 > 0)); then
        echo "  lost jobs (spawned, no final outcome), with the parent that names them:"
        sql "SELECT s.id || '  parent ' || s.parent || ' ' || p.kind || ' ' || p.outcome || ' attempt ' || p.attempt || '  ' || coalesce(o.outcome, 'no outcome') FROM (SELECT DISTINCT jsonb_array_elements_text(spawned) AS id, job_id AS parent FROM job_outcomes) s JOIN job_outcomes p ON p.job_id = s.parent LEFT JOIN job_outcomes o ON o.job_id = s.id WHERE o.outcome IS DISTINCT FROM 'done' AND o.outcome IS DISTINCT FROM 'dead-lettered' LIMIT 10" | sed 's/^/    /'
    fi
    if (($2 > 0)); then
        echo "  outcomes no parent names (at most 5), with the parent's outcome:"
        sql "SELECT o.job_id || ' ' || o.kind || ' ' || o.outcome || '  parent ' || o.parent_id || ' ' || coalesce(p.kind || ' ' || p.outcome || ' attempt ' || p.attempt || ', spawned ' || jsonb_array_length(p.spawned), 'no outcome') FROM job_outcomes o LEFT JOIN job_outcomes p ON p.job_id = o.parent_id WHERE o.parent_id IS NOT NULL AND (p.job_id IS NULL OR NOT p.spawned ? o.job_id) LIMIT 5" | sed 's/^/    /'
    fi
}
