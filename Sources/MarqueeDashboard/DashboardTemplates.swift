import Mustache

/// The pages' Mustache templates, stylesheet and script, as string literals: nothing to copy beside the binary,
/// nothing fetched from the internet, no front-end build step.
///
/// `{{name}}` is HTML-escaped by Mustache; `{{{name}}}` is only used for markup rendered here (the panels, SVG).
enum DashboardTemplates {
    /// Every template, by name: `page` (the frame), `overview`, `deadLetter`, `notFound`.
    static let library: MustacheLibrary = {
        var library = MustacheLibrary()
        do {
            try library.register(Self.page, named: "page")
            try library.register(Self.overview, named: "overview")
            try library.register(Self.deadLetter, named: "deadLetter")
            try library.register(Self.message, named: "message")
        } catch {
            preconditionFailure("a dashboard template does not parse: \(error)")
        }
        return library
    }()

    static func render(_ name: String, _ context: [String: Any]) -> String {
        guard let text = Self.library.render(context, withTemplate: name) else {
            preconditionFailure("no dashboard template named \(name)")
        }
        return text
    }

    static let page = """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="color-scheme" content="light dark">
        <title>{{title}} — Marquee</title>
        <link rel="stylesheet" href="/assets/dashboard.css">
        <script src="/assets/dashboard.js" defer></script>
        </head>
        <body data-refresh="{{refreshSeconds}}">
        <a class="skip" href="#content">Skip to content</a>
        <header class="top">
        <p class="brand"><a href="/">Marquee</a></p>
        <nav aria-label="Sections">
        <ul>
        <li><a href="/#lag">Lag</a></li>
        <li><a href="/#workers">Workers</a></li>
        <li><a href="/#dlq">Dead letters</a></li>
        <li><a href="/#store">Store</a></li>
        {{#grafanaURL}}<li><a href="{{grafanaURL}}" rel="noopener">Grafana</a></li>{{/grafanaURL}}
        </ul>
        </nav>
        {{#refreshing}}
        <p class="refresh"><span id="updated">{{sampled}}</span>
        <button type="button" id="refresh-toggle" aria-pressed="false">Pause refresh</button></p>
        {{/refreshing}}
        </header>
        <main id="content" tabindex="-1" data-rounds="{{rounds}}">
        <h1>{{title}}</h1>
        {{{body}}}
        </main>
        <footer><p>Read-only. Replay and purge stay in the CLI: <code>marquee dlq</code>.
        JSON: <a href="/api/lag">lag</a>, <a href="/api/workers">workers</a>, <a href="/api/dlq">dead letters</a>,
        <a href="/api/store">store</a>.</p></footer>
        </body>
        </html>

        """

    static let overview = """
        <section id="lag" aria-labelledby="lag-heading">
        <h2 id="lag-heading">Consumer lag</h2>
        <p class="hint">Status over the last {{statusSamples}} samples, one every {{interval}}, with the rules of
        <code>marquee lag</code>: OK, LAGGING (due lag growing while commits move), STALLED (messages due, no
        commit), STOPPED (no member).</p>
        {{#lagError}}<p class="error" role="alert">Lag could not be sampled: {{lagError}}</p>{{/lagError}}
        {{^stages}}<p>No sample yet.</p>{{/stages}}
        <div class="cards">
        {{#stages}}
        <article class="card" id="stage-{{stage}}" aria-labelledby="stage-{{stage}}-heading">
        <h3 id="stage-{{stage}}-heading">{{stage}}
        <span class="badge status-{{statusClass}}" data-test="{{stage}}-status">{{status}}</span></h3>
        <p class="reason">{{reason}}</p>
        <dl class="figures">
        <div><dt>Group</dt><dd>{{group}} ({{members}})</dd></div>
        <div><dt>Lag</dt><dd data-test="{{stage}}-lag">{{lag}}</dd></div>
        <div><dt>Due</dt><dd data-test="{{stage}}-due">{{due}}</dd></div>
        <div><dt>Lag age</dt><dd data-test="{{stage}}-lag-age">{{lagAge}}</dd></div>
        <div><dt>Consume rate</dt><dd data-test="{{stage}}-rate">{{rate}}</dd></div>
        <div><dt>Time to drain</dt><dd data-test="{{stage}}-drain">{{drain}}</dd></div>
        </dl>
        {{#charts}}
        <figure class="chart-figure">
        {{{svg}}}
        <figcaption>{{caption}}</figcaption>
        <details id="{{id}}-data">
        <summary>Numbers behind the chart</summary>
        <div class="scroll" role="region" aria-label="{{caption}}: numbers" tabindex="0">
        <table>
        <caption>{{caption}}</caption>
        <thead><tr><th scope="col">Time (UTC)</th><th scope="col">{{unit}}</th></tr></thead>
        <tbody>{{#rows}}<tr><th scope="row">{{time}}</th><td>{{value}}</td></tr>{{/rows}}</tbody>
        </table>
        </div>
        </details>
        </figure>
        {{/charts}}
        {{#hasTiers}}
        <div class="scroll" role="region" aria-label="Retry tiers of {{stage}}" tabindex="0">
        <table class="tiers">
        <caption>Retry tiers: due now vs. waiting for their time</caption>
        <thead><tr><th scope="col">Tier</th><th scope="col">Overdue</th><th scope="col">Not yet due</th>
        <th scope="col">Unscanned</th></tr></thead>
        <tbody>
        {{#tiers}}<tr><th scope="row"><abbr title="{{topic}}">tier {{tier}}</abbr></th>
        <td data-test="{{stage}}-tier-{{tier}}-overdue">{{overdue}}</td>
        <td data-test="{{stage}}-tier-{{tier}}-not-due">{{notYetDue}}</td><td>{{unscanned}}</td></tr>{{/tiers}}
        </tbody>
        </table>
        </div>
        {{/hasTiers}}
        {{#notes}}<p class="note">{{.}}</p>{{/notes}}
        </article>
        {{/stages}}
        </div>
        </section>

        <section id="workers" aria-labelledby="workers-heading">
        <h2 id="workers-heading">Workers</h2>
        {{#workersError}}<p class="error" role="alert">The stages' consumer groups could not be described (members as last
        seen): {{workersError}}</p>{{/workersError}}
        {{^workers}}<p>No workers: no member in the stages' consumer groups, and no <code>MARQUEE_WORKERS</code>
        (stage=host:port, …).</p>{{/workers}}
        {{#hasWorkers}}
        <div class="scroll" role="region" aria-label="Workers" tabindex="0">
        <table>
        <caption>Each worker's <code>/readyz</code> and <code>/metrics</code>: the members of the stages' consumer
        groups at the address their client id announces, and <code>MARQUEE_WORKERS</code></caption>
        <thead><tr><th scope="col">Stage</th><th scope="col">Address</th><th scope="col">Group member</th>
        <th scope="col">Ready</th><th scope="col">Why not</th><th scope="col">In flight</th><th scope="col">Assigned</th>
        <th scope="col">Paused</th><th scope="col">Succeeded</th><th scope="col">Retried</th>
        <th scope="col">Dead-lettered</th><th scope="col">Restarts seen</th></tr></thead>
        <tbody>
        {{#workers}}<tr data-worker="{{id}}"><th scope="row">{{stage}}</th><td>{{address}}</td><td>{{member}}</td>
        <td><span class="badge state-{{state}}" data-test="worker-{{id}}-state">{{state}}</span></td>
        <td>{{reason}}</td><td data-test="worker-{{id}}-in-flight">{{inFlight}}</td><td>{{assigned}}</td>
        <td>{{paused}}</td><td data-test="worker-{{id}}-succeeded">{{succeeded}}</td><td>{{retried}}</td>
        <td>{{deadLettered}}</td><td data-test="worker-{{id}}-restarts">{{restarts}}</td></tr>{{/workers}}
        </tbody>
        </table>
        </div>
        <p class="hint">Restarts seen: how often a worker's job counters fell between two samples of this
        dashboard (a new process at the address), since {{since}}.</p>
        {{/hasWorkers}}
        </section>

        <section id="dlq" aria-labelledby="dlq-heading">
        <h2 id="dlq-heading">Dead letters</h2>
        {{#dlqError}}<p class="error" role="alert">Dead letters could not be read: {{dlqError}}</p>{{/dlqError}}
        {{#dlq}}
        <dl class="figures">
        <div><dt>All stages</dt><dd data-test="dlq-total">{{total}}</dd></div>
        {{#byStage}}<div><dt>{{stage}}</dt><dd data-test="dlq-{{stage}}">{{count}}</dd></div>{{/byStage}}
        {{#purged}}<div><dt>Purged (hidden)</dt><dd>{{purged}}</dd></div>{{/purged}}
        </dl>
        {{#hasCounts}}
        <div class="scroll" role="region" aria-label="Dead letters by kind" tabindex="0">
        <table>
        <caption>By stage, kind and error kind</caption>
        <thead><tr><th scope="col">Stage</th><th scope="col">Kind</th><th scope="col">Error kind</th>
        <th scope="col">Letters</th></tr></thead>
        <tbody>{{#counts}}<tr><th scope="row">{{stage}}</th><td>{{kind}}</td><td>{{errorKind}}</td>
        <td data-test="dlq-count-{{stage}}-{{kind}}-{{errorKind}}">{{count}}</td></tr>{{/counts}}</tbody>
        </table>
        </div>
        <div class="scroll" role="region" aria-label="Latest dead letters" tabindex="0">
        <table class="letters">
        <caption>The latest {{latestCount}}, newest first</caption>
        <thead><tr><th scope="col">Letter</th><th scope="col">Time (UTC)</th><th scope="col">Kind</th>
        <th scope="col">Error kind</th><th scope="col">Error</th></tr></thead>
        <tbody>{{#latest}}<tr><th scope="row"><a href="/dlq/{{id}}">{{id}}</a></th><td>{{time}}</td><td>{{kind}}</td>
        <td>{{errorKind}}</td><td class="error-text">{{error}}</td></tr>{{/latest}}</tbody>
        </table>
        </div>
        {{/hasCounts}}
        {{^hasCounts}}<p>No dead letters.</p>{{/hasCounts}}
        {{/dlq}}
        </section>

        <section id="store" aria-labelledby="store-heading">
        <h2 id="store-heading">Store</h2>
        {{#storeError}}<p class="error" role="alert">{{storeError}}</p>{{/storeError}}
        {{#store}}
        <p class="hint">{{location}}</p>
        <dl class="figures">
        <div><dt>Movies</dt><dd data-test="store-movies">{{movies}}</dd></div>
        <div><dt>Box-office lists</dt><dd data-test="store-box-office">{{boxOfficeLists}}</dd></div>
        <div><dt>Box-office entries</dt><dd>{{boxOfficeEntries}}</dd></div>
        <div><dt>Books</dt><dd data-test="store-books">{{books}}</dd></div>
        <div><dt>Images</dt><dd data-test="store-images">{{images}}</dd></div>
        </dl>
        <details id="store-all-counts">
        <summary>Every table</summary>
        <table><caption>Rows per table</caption>
        <thead><tr><th scope="col">Table</th><th scope="col">Rows</th></tr></thead>
        <tbody>{{#all}}<tr><th scope="row">{{name}}</th><td>{{count}}</td></tr>{{/all}}</tbody></table>
        </details>
        <h3>Latest ingested</h3>
        {{^latest}}<p>Nothing stored yet.</p>{{/latest}}
        <ul class="items">
        {{#latest}}<li class="item" data-key="{{key}}">
        {{#thumbnail}}<img src="{{thumbnail}}" alt="{{role}} of {{title}}"
        width="92" loading="lazy"{{#color}} style="background:{{color}}"{{/color}}>{{/thumbnail}}
        {{^thumbnail}}<span class="no-image" aria-hidden="true">{{initial}}</span>{{/thumbnail}}
        <span class="item-title">{{title}}</span>
        <span class="item-meta">{{kind}} · {{fetched}}</span>
        </li>{{/latest}}
        </ul>
        {{/store}}
        </section>

        """

    static let deadLetter = """
        <p><a href="/#dlq">← All dead letters</a> · <a href="/api/dlq/{{id}}">JSON</a></p>
        <dl class="facts">
        <dt>Topic</dt><dd>{{topic}} [{{partition}}] at {{offset}}</dd>
        <dt>Kind</dt><dd>{{kind}}</dd>
        <dt>Error kind</dt><dd>{{errorKind}}</dd>
        <dt>Error</dt><dd class="error-text" data-test="letter-error">{{error}}</dd>
        <dt>Attempt</dt><dd>{{attempt}}</dd>
        <dt>First failed at</dt><dd>{{origin}}</dd>
        <dt>Job</dt><dd>{{jobID}}</dd>
        <dt>Root, parent</dt><dd>{{root}}, {{parent}}</dd>
        <dt>Key</dt><dd>{{key}}</dd>
        <dt>Time (UTC)</dt><dd>{{time}}</dd>
        {{#isPurged}}<dt>Purged</dt><dd>yes: hidden from the lists, still held by the topic</dd>{{/isPurged}}
        </dl>
        <h2>Headers</h2>
        <div class="scroll" role="region" aria-label="Headers" tabindex="0">
        <table>
        <caption>In record order</caption>
        <thead><tr><th scope="col">Name</th><th scope="col">Value</th></tr></thead>
        <tbody>{{#headers}}<tr><th scope="row">{{name}}</th><td class="mono">{{value}}</td></tr>{{/headers}}</tbody>
        </table>
        </div>
        <h2>Payload <small>({{payloadForm}}, {{payloadBytes}} bytes)</small></h2>
        <pre class="payload" tabindex="0" data-test="letter-payload">{{payload}}</pre>

        """

    static let message = """
        <p>{{message}}</p>
        <p><a href="/">Back to the dashboard</a></p>

        """

    static let stylesheet = """
        :root {
          --bg: #f7f7f8; --fg: #1b1c1f; --muted: #5b5f68; --card: #ffffff; --line: #d6d8de;
          --accent: #1f5fbf; --ok: #1e7a3a; --warn: #8a5a00; --bad: #b3261e; --stop: #5b5f68;
          --chart: #1f5fbf; --focus: #ffbf47;
          font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "Noto Sans CJK KR", sans-serif;
          line-height: 1.45;
        }
        @media (prefers-color-scheme: dark) {
          :root {
            --bg: #121316; --fg: #e8e9ec; --muted: #a7abb5; --card: #1c1e23; --line: #363a43;
            --accent: #8ab4ff; --ok: #6fd08c; --warn: #f2c15b; --bad: #ff8a80; --stop: #a7abb5; --chart: #8ab4ff;
          }
        }
        * { box-sizing: border-box; }
        body { margin: 0; background: var(--bg); color: var(--fg); }
        a { color: var(--accent); }
        a:focus-visible, button:focus-visible, summary:focus-visible, [tabindex]:focus-visible {
          outline: 3px solid var(--focus); outline-offset: 2px;
        }
        .skip { position: absolute; left: -999px; top: 0; background: var(--card); padding: .5rem; }
        .skip:focus { left: .5rem; z-index: 10; }
        header.top { display: flex; flex-wrap: wrap; align-items: center; gap: .5rem 1.5rem; padding: .75rem 1rem;
          background: var(--card); border-bottom: 1px solid var(--line); }
        .brand { margin: 0; font-weight: 700; font-size: 1.2rem; }
        .brand a { color: var(--fg); text-decoration: none; }
        nav ul { display: flex; flex-wrap: wrap; gap: .25rem 1rem; list-style: none; margin: 0; padding: 0; }
        .refresh { margin: 0 0 0 auto; color: var(--muted); font-size: .9rem; }
        button { font: inherit; padding: .25rem .6rem; border: 1px solid var(--line); border-radius: .3rem;
          background: var(--bg); color: var(--fg); cursor: pointer; }
        main { padding: 1rem; max-width: 1400px; margin: 0 auto; }
        main:focus { outline: none; }
        h1 { font-size: 1.5rem; margin: .25rem 0 1rem; }
        h2 { font-size: 1.25rem; margin: 2rem 0 .5rem; border-bottom: 1px solid var(--line); padding-bottom: .25rem; }
        h3 { font-size: 1.1rem; margin: 0 0 .25rem; }
        section { scroll-margin-top: 1rem; }
        .hint, .note, figcaption, .item-meta { color: var(--muted); font-size: .9rem; }
        .error { color: var(--bad); font-weight: 600; }
        .cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 380px), 1fr)); gap: 1rem; }
        .card { background: var(--card); border: 1px solid var(--line); border-radius: .5rem; padding: 1rem;
          min-width: 0; }
        .reason { margin: .25rem 0 .5rem; }
        .figures { display: flex; flex-wrap: wrap; gap: .5rem 1.25rem; margin: .5rem 0; }
        .figures div { min-width: 6.5rem; }
        .figures dt { color: var(--muted); font-size: .85rem; }
        .figures dd { margin: 0; font-size: 1.15rem; font-variant-numeric: tabular-nums; font-weight: 600; }
        .badge { display: inline-block; font-size: .8rem; font-weight: 700; padding: .05rem .45rem;
          border-radius: 1rem; border: 2px solid currentColor; vertical-align: middle; }
        .status-ok, .state-ready { color: var(--ok); }
        .status-lagging, .state-not-ready, .state-no-address { color: var(--warn); }
        .status-stalled, .state-unreachable { color: var(--bad); }
        .status-stopped { color: var(--stop); }
        .chart-figure { margin: .75rem 0; }
        .chart { width: 100%; height: 110px; display: block; border: 1px solid var(--line); border-radius: .3rem; }
        .chart-line { fill: none; stroke: var(--chart); stroke-width: 2; vector-effect: non-scaling-stroke; }
        .chart-dot { fill: var(--chart); }
        .chart-grid { stroke: var(--line); stroke-width: 1; vector-effect: non-scaling-stroke; }
        .chart-label { fill: var(--muted); font-size: 11px; }
        details { margin: .25rem 0; }
        summary { cursor: pointer; color: var(--accent); }
        .scroll { overflow-x: auto; max-width: 100%; }
        table { border-collapse: collapse; width: 100%; margin: .5rem 0; font-variant-numeric: tabular-nums; }
        caption { text-align: left; color: var(--muted); font-size: .9rem; padding: .25rem 0; }
        th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
        thead th { font-size: .85rem; color: var(--muted); white-space: nowrap; }
        .error-text { max-width: 40rem; overflow-wrap: anywhere; }
        .mono, pre, code { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; }
        pre.payload { background: var(--card); border: 1px solid var(--line); padding: .75rem; overflow: auto;
          max-height: 70vh; white-space: pre-wrap; overflow-wrap: anywhere; }
        .facts { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; }
        .facts dt { color: var(--muted); }
        .facts dd { margin: 0; overflow-wrap: anywhere; }
        .items { list-style: none; padding: 0; display: grid; gap: 1rem;
          grid-template-columns: repeat(auto-fill, minmax(120px, 1fr)); }
        .item { display: flex; flex-direction: column; gap: .25rem; }
        .item img, .no-image { width: 92px; max-width: 100%; aspect-ratio: 2 / 3; object-fit: cover;
          border-radius: .25rem; border: 1px solid var(--line); }
        .no-image { display: flex; align-items: center; justify-content: center; font-size: 2rem; color: var(--muted); }
        .item-title { font-weight: 600; overflow-wrap: anywhere; }
        footer { padding: 1rem; color: var(--muted); font-size: .85rem; border-top: 1px solid var(--line); }
        @media (max-width: 480px) {
          main { padding: .5rem; }
          .card { padding: .75rem; }
          .facts { grid-template-columns: 1fr; }
          .facts dd { margin-bottom: .5rem; }
        }

        """

    /// Refreshes the page's content every `data-refresh` seconds without reloading: fetches the same page, swaps
    /// `<main>` and keeps the open `<details>` open. It waits while the keyboard focus is inside `<main>` or text is
    /// selected, so nobody loses their place. A button pauses it (WCAG 2.2.2).
    static let script = """
        (function () {
          "use strict";
          var seconds = Number(document.body.getAttribute("data-refresh")) || 10;
          var button = document.getElementById("refresh-toggle");
          var paused = false;
          var busy = false;
          if (button) {
            button.addEventListener("click", function () {
              paused = !paused;
              button.setAttribute("aria-pressed", String(paused));
              button.textContent = paused ? "Resume refresh" : "Pause refresh";
              if (!paused) refresh();
            });
          }
          function refresh() {
            if (paused || busy || document.hidden) return;
            // Never pull the page from under a keyboard user or a selection: wait until focus leaves <main>.
            var main = document.getElementById("content");
            var active = document.activeElement;
            var selecting = window.getSelection && String(window.getSelection()).length > 0;
            if ((main && active && active !== main && main.contains(active)) || selecting) {
              var note = document.getElementById("updated");
              if (note && note.textContent.indexOf("waits") < 0) note.textContent += " (refresh waits while you read)";
              return;
            }
            busy = true;
            fetch(location.pathname + location.search, { cache: "no-store", headers: { "Accept": "text/html" } })
              .then(function (response) { return response.ok ? response.text() : null; })
              .then(function (html) {
                if (!html) return;
                var next = new DOMParser().parseFromString(html, "text/html");
                var fresh = next.getElementById("content");
                var current = document.getElementById("content");
                if (!fresh || !current) return;
                var open = Array.prototype.map.call(
                  current.querySelectorAll("details[open][id]"), function (d) { return d.id; });
                current.replaceWith(fresh);
                open.forEach(function (id) { var d = document.getElementById(id); if (d) d.open = true; });
                var updated = next.getElementById("updated");
                var mine = document.getElementById("updated");
                if (updated && mine) mine.textContent = updated.textContent;
                document.body.setAttribute("data-refreshed", String(Date.now()));
              })
              .catch(function () {
                var mine = document.getElementById("updated");
                if (mine) mine.textContent = "The dashboard did not answer; trying again.";
              })
              .finally(function () { busy = false; });
          }
          if (document.getElementById("updated")) setInterval(refresh, seconds * 1000);
          document.body.setAttribute("data-ready", "true");
        })();

        """
}
