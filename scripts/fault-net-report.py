#!/usr/bin/env python3
"""The per-wave report of a fault-net run (scripts/fault-net.sh), from the files the run left in its folder.

    scripts/fault-net-report.py var/fault-net/<stamp> [--goal-seconds 15]

Reads events.tsv (waves, links down and up, workers started, killed, stopped and exited, with their log files),
the workers' logs ("partitions assigned: …" / "partitions revoked: …" lines and their times), roots-<wave>.txt,
outcome-log.csv (every outcome report the indexer wrote and every change of a job_outcomes row, from the run's
trigger), job-outcomes.csv (the final rows), stats-<wave>-start/end.json (the emulator's counters) and
snapshots.tsv (what the cut-off host's processes held). Prints a table per wave and the lineage regressions, and
writes summary.json (rerun, lineage_regressions, max_unowned_s, drain_s) for the script's last line.

Ownership: a partition is owned at time t when a live process holds it (assigned and not yet revoked in its log,
not yet killed or exited) on a host whose link is up while the broker's link is up too. A gap is a time in which
no process owned it, from the group's first assignment until the run stopped its workers; a gap belongs to the
wave during which it began, and is named after the nearest event before it (a link down, a kill -9, a worker
joining or leaving).
"""
import argparse
import collections
import csv
import datetime
import json
import os
import re
import statistics
import sys

GROUP_OF = {"fetch": "fetch", "images": "images", "index": "records"}
FETCH_ROUTES_EXCLUDED = {"tmdb.image", "covers", "kakao.image", "control", "stats", "notFound"}
IMAGE_ROUTES = {"tmdb.image", "covers", "kakao.image"}
ASSIGNMENT = re.compile(r'"msg":"partitions (assigned|revoked): ([^"]*)"')
TIMESTAMP = re.compile(r'"ts":"([^"]+)"')
# A stage pausing for a dependency that is down, and the first job done once it is back (docs/stage.md).
PAUSE = re.compile(r'"msg":"(the store|the image store|the broker) (?:is down|refuses this worker.s credentials): pausing the stage')
BACK = re.compile(r'"msg":"(the store|the image store|the broker) is back: the stage is ready"')


def epoch(text):
    return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc).timestamp()


def read_events(folder):
    events = []
    with open(os.path.join(folder, "events.tsv")) as file:
        for line in file:
            time, _, rest = line.rstrip("\n").partition("\t")
            fields = rest.split(" ")
            events.append((float(time), fields[0], fields[1:]))
    return events


class Process:
    def __init__(self, pid, stage, slot, host, log, started):
        self.pid, self.stage, self.slot, self.host, self.log = pid, stage, slot, host, log
        self.started, self.ended, self.end_reason = started, None, None
        self.changes = []  # (time, "assigned" | "revoked", [partitions])
        self.dependency = []  # (time, "down" | "back", dependency)

    @property
    def name(self):
        return f"{self.stage}{self.slot}"


def read_processes(events):
    processes = {}
    for time, kind, args in events:
        if kind == "start":
            stage, slot, host, pid, log = args[:5]
            processes[pid] = Process(pid, stage, slot, host, log, time)
        elif kind == "kill9" and args[2] in processes:
            process = processes[args[2]]
            process.ended, process.end_reason = time, "kill -9"
        elif kind == "exit" and args[2] in processes:
            process = processes[args[2]]
            if process.ended is None:
                process.ended, process.end_reason = time, f"exit {args[3]} ({args[4]})"
    for process in processes.values():
        try:
            with open(process.log, errors="replace") as file:
                lines = file.readlines()
        except OSError:
            continue
        # A slot's log holds one process (instances have their own files).
        for line in lines:
            match = ASSIGNMENT.search(line)
            stamp = TIMESTAMP.search(line)
            if match and stamp:
                partitions = [p.strip() for p in match.group(2).split(",") if p.strip()]
                process.changes.append((epoch(stamp.group(1)), match.group(1), partitions))
            for pattern, state in ((PAUSE, "down"), (BACK, "back")):
                found = pattern.search(line)
                if found and stamp:
                    process.dependency.append((epoch(stamp.group(1)), state, found.group(1)))
    return processes


def first_per_stage(processes, state, host, since, until):
    """Per stage, the first time one of its workers logged `state` ("down": paused for, "back": back from) the
    dependency on `host` (broker or store) between `since` and `until`."""
    dependency = "the broker" if host == "broker" else "the store"
    first = {}
    for process in processes.values():
        for at, logged, what in process.dependency:
            if logged == state and what == dependency and since <= at < until:
                first[process.stage] = min(first.get(process.stage, at), at)
    return first


def subtract(intervals, holes):
    """intervals minus holes (both lists of (start, end))."""
    result = []
    for start, end in intervals:
        pieces = [(start, end)]
        for hole_start, hole_end in holes:
            next_pieces = []
            for a, b in pieces:
                if hole_end <= a or hole_start >= b:
                    next_pieces.append((a, b))
                    continue
                if a < hole_start:
                    next_pieces.append((a, hole_start))
                if hole_end < b:
                    next_pieces.append((hole_end, b))
            pieces = next_pieces
        result.extend(pieces)
    return result


def link_downtimes(events, end_of_run):
    down, intervals = {}, collections.defaultdict(list)
    for time, kind, args in events:
        if kind == "link-down":
            down[args[0]] = time
        elif kind == "link-up" and args[0] in down:
            intervals[args[0]].append((down.pop(args[0]), time))
    for host, start in down.items():
        intervals[host].append((start, end_of_run))
    return intervals


def ownership_gaps(processes, events, stop_time):
    """Per group: the gaps of every partition, as (start, end, partition)."""
    downtimes = link_downtimes(events, stop_time)
    holdings = collections.defaultdict(lambda: collections.defaultdict(list))  # group -> partition -> intervals
    first_assignment = {}
    for process in processes.values():
        group = GROUP_OF[process.stage]
        end = process.ended if process.ended is not None else stop_time
        unreachable = downtimes.get(process.host, []) + downtimes.get("broker", [])
        held = {}
        for time, change, partitions in process.changes:
            if change == "assigned":
                if partitions:
                    first_assignment[group] = min(first_assignment.get(group, time), time)
                for partition in partitions:
                    held.setdefault(partition, time)
            else:
                for partition in partitions:
                    if partition in held:
                        holdings[group][partition] += subtract([(held.pop(partition), time)], unreachable)
        for partition, since in held.items():
            holdings[group][partition] += subtract([(since, max(since, end))], unreachable)
    gaps = collections.defaultdict(list)
    for group, partitions in holdings.items():
        window_start = first_assignment.get(group)
        if window_start is None:
            continue
        for partition, intervals in partitions.items():
            cursor = window_start
            for start, end in sorted(intervals):
                if start > cursor + 0.001:
                    gaps[group].append((cursor, start, partition))
                cursor = max(cursor, end)
            if cursor < stop_time - 0.001:
                gaps[group].append((cursor, stop_time, partition))
    return gaps


def cause_of(time, events, group=None):
    """The nearest event at or before `time` that can leave a partition of `group` without an owner: a link going
    down or up, or a worker of that group killed, stopped, joining or exiting."""
    best = None
    for event_time, kind, args in events:
        if event_time > time + 0.5:
            break
        if group and kind in ("kill9", "term", "start", "exit") and GROUP_OF.get(args[0]) != group:
            continue
        if kind in ("link-down", "link-up"):
            best = f"{kind} {args[0]}"
        elif kind == "unstick" and (not group or GROUP_OF.get(args[0]) == group):
            best = f"{args[0]} emptied (the test broker's livelock)"
        elif kind == "kill9":
            best = f"kill -9 {args[0]}{args[1]}"
        elif kind == "term":
            best = f"SIGTERM {args[0]}{args[1]} (scale-down)"
        elif kind == "start":
            best = f"{args[0]}{args[1]} joined on {args[2]}"
        elif kind == "exit" and args[4] == "unexpected":
            best = f"{args[0]}{args[1]} exited ({args[3]})"
    return best or "start-up"


def read_monitor(folder):
    """monitor.tsv: per worker slot, its samples (time, jobs finished so far by the process in the slot)."""
    samples = collections.defaultdict(list)
    try:
        with open(os.path.join(folder, "monitor.tsv")) as file:
            for line in file:
                fields = line.rstrip("\n").split("\t")
                figures = dict(field.split("=", 1) for field in fields[2:] if "=" in field)
                if "jobs_total" in figures:
                    samples[fields[1]].append((float(fields[0]), int(figures["jobs_total"])))
    except OSError:
        pass
    return samples


def working_again(samples, names, after):
    """Per slot name: seconds from `after` to the first sample showing a job finished since the sample before."""
    result = {}
    for name in names:
        previous = None
        for time, jobs in samples.get(name, []):
            if previous is not None and time >= after and jobs > previous:
                result[name] = time - after
                break
            previous = jobs
    return result


def read_csv(path):
    """The rows of a CSV file with a header; none when the run ended before it was written."""
    try:
        with open(path, newline="") as file:
            return list(csv.DictReader(file))
    except OSError:
        print(f"(no {os.path.basename(path)}: the run ended before the lineage was read)")
        return []


def error_class(text):
    text = re.sub(r"https?://\S+", "URL", text or "")
    text = re.sub(r"\d+", "#", text)
    return text[:70]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("folder")
    parser.add_argument("--goal-seconds", type=float, default=15)
    options = parser.parse_args()
    folder = options.folder
    events = read_events(folder)
    processes = read_processes(events)
    stop_time = next((t for t, k, _ in events if k == "stop-all"), events[-1][0])

    waves = []  # (name, start, faults_over, drained, status)
    for time, kind, args in events:
        if kind == "wave-start":
            waves.append({"name": args[0], "start": time})
        elif kind == "wave-faults-over":
            waves[-1]["faults_over"] = time
        elif kind == "wave-drained":
            waves[-1]["drained"], waves[-1]["status"] = time, args[1]
    for index, wave in enumerate(waves):
        wave["end"] = waves[index + 1]["start"] if index + 1 < len(waves) else stop_time
    def wave_at(time):
        for wave in waves:
            if wave["start"] <= time < wave["end"]:
                return wave["name"]
        return None

    gaps = ownership_gaps(processes, events, stop_time)
    monitor = read_monitor(folder)
    by_wave = collections.defaultdict(list)
    for group, group_gaps in gaps.items():
        for start, end, partition in group_gaps:
            name = wave_at(start)
            if name:
                by_wave[name].append((end - start, start, end, group, partition))

    # The lineage: which wave each job belongs to (its root's wave).
    root_wave = {}
    for wave in waves:
        try:
            with open(os.path.join(folder, f"roots-{wave['name']}.txt")) as file:
                for line in file:
                    if line.strip():
                        root_wave[line.strip()] = wave["name"]
        except OSError:
            pass
    log = read_csv(os.path.join(folder, "outcome-log.csv"))
    final = read_csv(os.path.join(folder, "job-outcomes.csv"))
    reports = collections.defaultdict(list)
    for row in log:
        if row["op"] == "report":
            reports[row["job_id"]].append(row)

    stats = collections.defaultdict(lambda: {"jobs": 0, "fetch": 0, "dead": 0, "retries": 0, "holds": 0,
                                             "rerun": 0, "regressions": 0, "fetch_runs": 0,
                                             "errors": collections.Counter(), "rerun_stages": collections.Counter()})
    for row in final:
        wave = root_wave.get(row["root_id"], "?")
        stats[wave]["jobs"] += 1
        stats[wave]["fetch"] += row["stage"] == "fetch"
        stats[wave]["dead"] += row["outcome"] == "dead-lettered"
    rerun_jobs = []
    for job, rows in reports.items():
        wave = root_wave.get(rows[0]["root_id"], "?")
        runs = collections.defaultdict(set)
        fetch_runs = set()
        for row in rows:
            held = (row["error"] or "").startswith("held:")
            if row["outcome"] == "retried":
                if held:
                    stats[wave]["holds"] += 1
                else:
                    stats[wave]["retries"] += 1
                    stats[wave]["errors"][error_class(row["error"])] += 1
            if not held:
                runs[row["attempt"]].add(row["fetched_at"])
                if row["stage"] == "fetch":
                    fetch_runs.add((row["attempt"], row["fetched_at"]))
        stats[wave]["fetch_runs"] += len(fetch_runs)
        if any(len(times) > 1 for times in runs.values()):
            stats[wave]["rerun"] += 1
            stats[wave]["rerun_stages"][rows[0]["stage"]] += 1
            rerun_jobs.append(job)
    regressions = [row for row in log if row["op"] == "change" and row["old_outcome"] in ("done", "dead-lettered")
                   and row["outcome"] == "retried"]
    flips = [row for row in log if row["op"] == "change" and row["old_outcome"] in ("done", "dead-lettered")
             and row["outcome"] in ("done", "dead-lettered") and row["old_outcome"] != row["outcome"]]
    for row in regressions:
        stats[root_wave.get(row["root_id"], "?")]["regressions"] += 1

    def upstream(wave):
        try:
            with open(os.path.join(folder, f"stats-{wave}-start.json")) as file:
                before = json.load(file)["routes"]
            with open(os.path.join(folder, f"stats-{wave}-end.json")) as file:
                after = json.load(file)["routes"]
        except (OSError, ValueError, KeyError):
            return None, None
        diff = {route: after.get(route, 0) - before.get(route, 0) for route in after}
        fetch = sum(count for route, count in diff.items() if route not in FETCH_ROUTES_EXCLUDED)
        images = sum(count for route, count in diff.items() if route in IMAGE_ROUTES)
        return fetch, images

    print()
    print("Per wave (unowned: the longest time a partition had no live owner on a reachable host; drain: from the")
    print("end of the wave's fault until `marquee drain` found it drained, its 3-sample settle included; the")
    print("baseline's is its whole wave, from the enqueue)")
    header = f"  {'wave':<11} {'jobs':>6} {'unowned':>8} {'gaps':>5} {'drain':>7} {'retries':>8} {'/1k':>5} {'holds':>6} {'dead':>5} {'rerun':>6} {'regr':>5} {'req/run':>8}"
    print(header)
    drains, max_unowned = [], 0.0
    baseline_rate = None
    for wave in waves:
        name = wave["name"]
        figures = stats[name]
        wave_gaps = sorted(by_wave.get(name, []), reverse=True)
        longest = wave_gaps[0][0] if wave_gaps else 0.0
        max_unowned = max(max_unowned, longest)
        drain = wave.get("drained", wave["end"]) - wave.get("faults_over", wave["start"])
        wave["drain"] = drain
        if name != "baseline":  # its "drain" is the whole wave's work, the yardstick of the others
            drains.append(drain)
        per_thousand = 1000 * figures["retries"] / figures["jobs"] if figures["jobs"] else 0
        if name == "baseline":
            baseline_rate = per_thousand
        fetch_requests, _ = upstream(name)
        per_run = f"{fetch_requests / figures['fetch_runs']:.2f}" if fetch_requests and figures["fetch_runs"] else "—"
        print(f"  {name:<11} {figures['jobs']:>6} {longest:>7.1f}s {len(wave_gaps):>5} {drain:>6.1f}s {figures['retries']:>8} "
              f"{per_thousand:>5.0f} {figures['holds']:>6} {figures['dead']:>5} {figures['rerun']:>6} {figures['regressions']:>5} {per_run:>8}")
        wave["gaps"] = wave_gaps
        wave["status_text"] = "" if wave.get("status") == "0" else f" (NOT drained: marquee drain exit {wave.get('status')})"

    print()
    print("Per wave, in detail")
    link_events = [(t, k, a) for t, k, a in events if k in ("link-down", "link-up")]
    for wave in waves:
        name = wave["name"]
        figures = stats[name]
        print(f"  {name}{wave['status_text']}")
        if wave["gaps"]:
            length, start, end, group, partition = wave["gaps"][0]
            lengths = [g[0] for g in wave["gaps"]]
            causes = collections.Counter(cause_of(g[1], events, g[3]) for g in wave["gaps"])
            print(f"    unowned          longest {length:.1f} s ({group} {partition}, from {start - wave['start']:.1f} s into the wave, after {cause_of(start, events, group)}); "
                  f"{len(lengths)} gaps, median {statistics.median(lengths):.1f} s")
            print(f"    gaps after       " + ", ".join(f"{cause} ×{count}" for cause, count in causes.most_common(6)))
            if name in ("scale-up", "scale-down"):
                # The scale events' own figure: gaps no kill -9, unexpected exit or link change reached into (the
                # short form's scale-up ends with two kill -9s, whose partitions wait out the session timeout).
                disturbances = [t for t, k, a in events
                                if k in ("kill9", "link-down", "link-up") or (k == "exit" and a[4] == "unexpected")]
                clean = [g for g in wave["gaps"] if not any(g[1] - 1 <= t <= g[2] for t in disturbances)]
                wave["scale_unowned"] = clean[0][0] if clean else 0.0
                print(f"    scale alone      longest {wave['scale_unowned']:.1f} s of {len(clean)} gaps no kill -9 or exit reached into (goal: 10 s)")
        else:
            print("    unowned          no gap")
        for time, kind, args in link_events:
            if wave["start"] <= time < wave["end"]:
                print(f"    {kind:<16} {args[0]} at {time - wave['start']:.1f} s")
                if kind == "link-down" and args[0] in ("broker", "store"):
                    paused = first_per_stage(processes, "down", args[0], time, wave["end"])
                    print("    paused           " + (", ".join(f"{stage} {at - time:.1f} s" for stage, at in sorted(paused.items()))
                                                     + " after the cut (per stage, its first worker's pause)" if paused else "no stage paused"))
                    wave.setdefault("pauses", {})[args[0]] = {stage: round(at - time, 1) for stage, at in paused.items()}
                if kind == "link-up" and args[0] in ("broker", "store"):
                    back = first_per_stage(processes, "back", args[0], time, wave["end"])
                    if back:
                        print("    resumed          " + ", ".join(f"{stage} {at - time:.1f} s" for stage, at in sorted(back.items()))
                              + " after the link's return (per stage, its first worker's \"is back\")")
                    wave.setdefault("resumes", {})[args[0]] = {stage: round(at - time, 1) for stage, at in back.items()}
                    # Per stage, the first of its workers to finish a job after the link's return.
                    names = sorted({p.name for p in processes.values() if p.started < time and (p.ended is None or p.ended > time)})
                    again = working_again(monitor, names, time)
                    per_stage = {}
                    for slot_name, seconds in again.items():
                        stage = slot_name.rstrip("0123456789")
                        per_stage[stage] = min(per_stage.get(stage, seconds), seconds)
                    if per_stage:
                        print("    first job done   " + ", ".join(f"{stage} {seconds:.0f} s" for stage, seconds in sorted(per_stage.items()))
                              + " after the link's return (per stage, by any of its workers; sampled every 2 s)")
        if name == "host-cut":
            wave_reruns = [(job, [row for row in reports[job] if not (row["error"] or "").startswith("held:")])
                           for job in rerun_jobs if root_wave.get(reports[job][0]["root_id"]) == name]
            host_cut_details(wave, processes, events, folder, options.goal_seconds, monitor, wave_reruns, stop_time)
        kills = [(t, a) for t, k, a in events if k == "kill9" and wave["start"] <= t < wave["end"]]
        if kills:
            print(f"    kill -9          {len(kills)}: " + ", ".join(f"{a[0]}{a[1]} at {t - wave['start']:.0f} s" for t, a in kills))
        unsticks = [(t, a) for t, k, a in events if k == "unstick" and wave["start"] <= t < wave["end"]]
        if unsticks:
            print("    test broker      " + ", ".join(f"{a[0]} had no assignment for a minute, emptied for 20 s at {t - wave['start']:.0f} s" for t, a in unsticks))
        exits = [(t, a) for t, k, a in events if k == "exit" and a[4] == "unexpected" and wave["start"] <= t < wave["end"]]
        if exits:
            print(f"    exits            {len(exits)} unexpected (restarted): " + ", ".join(f"{a[0]}{a[1]} status {a[3]} at {t - wave['start']:.0f} s" for t, a in exits))
        expected = f" (baseline {baseline_rate:.0f} per 1000 jobs)" if baseline_rate is not None and name != "baseline" else ""
        print(f"    retries          {figures['retries']}{expected}; holds {figures['holds']}; dead letters {figures['dead']}")
        if figures["errors"]:
            print("    retried for      " + "; ".join(f"{count}× {text}" for text, count in figures["errors"].most_common(4)))
        if figures["rerun"]:
            print(f"    reruns           {figures['rerun']} jobs (" + ", ".join(f"{stage} {count}" for stage, count in figures["rerun_stages"].items()) + ")")
        fetch_requests, image_requests = upstream(name)
        if fetch_requests is not None:
            print(f"    upstream         {fetch_requests} API requests for {figures['fetch_runs']} fetch runs reported; {image_requests} image downloads")

    print()
    if regressions:
        print(f"Lineage regressions: {len(regressions)} (a job_outcomes row going from done or dead-lettered back to retried)")
        mechanisms = collections.Counter(mechanism(row) for row in regressions)
        for text, count in mechanisms.most_common():
            print(f"  {count:>4}  {text}")
        for row in regressions[:20]:
            job = row["job_id"]
            print(f"  {job} ({row['stage']} {row['kind']}, wave {root_wave.get(row['root_id'], '?')}, {mechanism(row)}): "
                  f"{row['old_outcome']} (attempt {row['old_attempt']}, {row['old_source']}, finished {row['old_fetched_at']}) "
                  f"→ retried (attempt {row['attempt']}, {row['source']}, finished {row['fetched_at']}: {(row['error'] or '')[:80]})")
            for report in reports.get(job, []):
                print(f"      report: attempt {report['attempt']} {report['outcome']:<13} {report['source']:<40} finished {report['fetched_at']} "
                      f"written {float(report['logged_at']):.3f}{' ' + (report['error'] or '')[:60] if report['error'] else ''}")
        if len(regressions) > 20:
            print(f"  … and {len(regressions) - 20} more (outcome-log.csv)")
    else:
        print("Lineage regressions: none")
    if flips:
        print(f"Terminal outcomes replaced by another terminal outcome: {len(flips)} (done ↔ dead-lettered)")
        for row in flips[:10]:
            print(f"  {row['job_id']} ({row['stage']}): {row['old_outcome']} (attempt {row['old_attempt']}) → {row['outcome']} (attempt {row['attempt']})")

    summary = {
        "rerun": sum(s["rerun"] for s in stats.values()),
        "lineage_regressions": len(regressions),
        "lineage_regressed_jobs": len({row["job_id"] for row in regressions}),
        "max_unowned_s": round(max_unowned, 1),
        "unexpected_exits": sum(1 for _, k, a in events if k == "exit" and a[4] == "unexpected"),
        "unsticks": sum(1 for _, k, _ in events if k == "unstick"),
        "drain_s": round(max(drains), 1) if drains else 0,
        "waves": {w["name"]: {"unowned_s": round(w["gaps"][0][0], 1) if w["gaps"] else 0,
                              "scale_unowned_s": round(w.get("scale_unowned", 0.0), 1),
                              "drain_s": round(w["drain"], 1), "retries": stats[w["name"]]["retries"],
                              "holds": stats[w["name"]]["holds"], "dead": stats[w["name"]]["dead"],
                              "rerun": stats[w["name"]]["rerun"], "regressions": stats[w["name"]]["regressions"],
                              "jobs": stats[w["name"]]["jobs"], "pauses_s": w.get("pauses", {}),
                              "resumes_s": w.get("resumes", {})}
                  for w in waves},
    }
    with open(os.path.join(folder, "summary.json"), "w") as file:
        json.dump(summary, file, indent=1)


def mechanism(row):
    """How a regression came about, from the two reports' sources (topic/partition/offset) and attempts."""
    old_topic, _, old_offset = (row["old_source"] or "").rpartition("/")
    new_topic, _, new_offset = (row["source"] or "").rpartition("/")
    if row["old_source"] == row["source"]:
        return "the same message ran twice (redelivered after a revocation, a lost commit or a kill)"
    if old_topic == new_topic and row["old_attempt"] == row["attempt"]:
        return "a second copy of the job at another offset (its parent ran twice and sent it again)"
    return "a run from another copy of the job (a retry tier or another attempt) finished after the job was done"


def held_intervals(process, stop_time):
    """Per partition, when the process held it by its own log lines (whether or not it could reach anyone)."""
    held, result = {}, collections.defaultdict(list)
    for time, change, partitions in process.changes:
        for partition in partitions:
            if change == "assigned":
                held.setdefault(partition, time)
            elif partition in held:
                result[partition].append((held.pop(partition), time))
    end = process.ended if process.ended is not None else stop_time
    for partition, since in held.items():
        result[partition].append((since, max(since, end)))
    return result


def host_cut_details(wave, processes, events, folder, goal, monitor, reruns=(), stop_time=0.0):
    downs = [(t, a[0]) for t, k, a in events if k == "link-down" and wave["start"] <= t < wave["end"]]
    ups = [(t, a[0]) for t, k, a in events if k == "link-up" and wave["start"] <= t < wave["end"]]
    if not downs or not ups:
        return
    down, host = downs[0]
    up = ups[0][0]
    in_flight = uncommitted = None
    try:
        with open(os.path.join(folder, "snapshots.tsv")) as file:
            held = [line.rstrip("\n").split("\t")[1:] for line in file if abs(float(line.split("\t")[0]) - down) < 10]
        print("    held at the cut  " + "; ".join(" ".join(fields) for fields in held))
        in_flight = sum(int(field.split("=")[1]) for fields in held for field in fields if field.startswith("in_flight="))
        if any(field.startswith("uncommitted=") for fields in held for field in fields):
            uncommitted = sum(int(field.split("=")[1]) for fields in held for field in fields if field.startswith("uncommitted="))
    except (OSError, ValueError, IndexError):
        pass
    # When the cut-off host's partitions went to processes elsewhere, and when its own processes owned some again.
    on_host = [p for p in processes.values() if p.host == host and p.started < up and (p.ended is None or p.ended > down)]
    moved = []
    for process in on_host:
        owned_at_cut = set()
        for time, change, partitions in process.changes:
            if time > down:
                break
            owned_at_cut = set(partitions) if change == "assigned" else owned_at_cut - set(partitions)
        for partition in owned_at_cut:
            times = [t for other in processes.values() if other.host != host and other.stage == process.stage
                     for t, change, parts in other.changes if change == "assigned" and partition in parts and t > down]
            if times:
                moved.append(min(times) - down)
    if moved:
        print(f"    moved to others  {max(moved):.1f} s after the cut at the latest ({len(moved)} partitions; session timeout 6 s)")
    # Reruns one of whose runs was the cut-off host's: a run finished on a partition one of its processes held
    # through the cut (by its own log, which keeps the partitions until the host learns they were lost). Partitions
    # it was given after its return are a later rebalance's, not the cut's.
    holdings = [{partition: [(a, b) for a, b in spans if a <= down <= b] for partition, spans in held_intervals(p, stop_time).items()}
                for p in on_host]

    def cut_host_run(row):
        """When the cut-off host finished this run, or None when the run was not its."""
        topic, _, rest = (row["source"] or "").rpartition("/")
        topic, _, partition = topic.rpartition("/")
        key, finished = f"{topic}[{partition}]", int(row["fetched_at"]) / 1000
        mine = any(a <= finished <= b for holding in holdings for a, b in holding.get(key, []))
        return finished if mine else None

    caused = []
    phases = collections.Counter()
    for job, rows in reruns:
        times = [t for t in (cut_host_run(row) for row in rows) if t is not None]
        if not times:
            continue
        caused.append(job)
        # Its first run on the host: before the cut (finished, not yet committed), while cut off, or after the
        # link's return (a job it held through the cut).
        first = min(times)
        phases["before the cut" if first < down else "while cut off" if first < up else "after its return"] += 1
    if reruns:
        limit = f"; held at the cut: {in_flight} in flight" if in_flight is not None else ""
        if uncommitted is not None:
            limit += f", {uncommitted} taken and not yet committable"
        split = ", ".join(f"{phases[p]} {p}" for p in ("before the cut", "while cut off", "after its return") if phases[p])
        print(f"    reruns by it     {len(caused)} of the wave's {len(reruns)} reruns had a run on the cut-off host{limit}")
        if split:
            print(f"                     its first run finished {split}")
    wave["cut_reruns"] = len(caused)
    again = []
    slots = sorted({(p.stage, p.slot) for p in on_host})
    for stage, slot in slots:
        times = [t for p in processes.values() if p.stage == stage and p.slot == slot and p.host == host
                 for t, change, parts in p.changes if change == "assigned" and parts and t >= up]
        again.append((stage + slot, min(times) - up if times else None))
    if again:
        worst = max((s for _, s in again if s is not None), default=None)
        missing = [name for name, s in again if s is None]
        verdict = "goal met" if worst is not None and worst <= goal and not missing else "GOAL MISSED"
        print(f"    owns again       " + ", ".join(f"{name} {s:.1f} s" if s is not None else f"{name} never" for name, s in again)
              + f" after the link's return ({verdict}: {goal:.0f} s)")
    working = working_again(monitor, [name for name, _ in again], up)
    if working:
        print("    first job done   " + ", ".join(f"{name} {seconds:.0f} s" for name, seconds in sorted(working.items()))
              + " after the link's return (sampled every 2 s; a job held through the cut counts)")


if __name__ == "__main__":
    sys.exit(main())
