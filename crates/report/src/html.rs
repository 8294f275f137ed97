//! `index.html`: one self-contained page — inline CSS and SVG, no script, no fetch. The
//! summary table first, then a section per paper (plots, tables, notes, the command that
//! re-runs it), the run's metadata last. Print CSS keeps figures whole and starts each paper
//! on a new page.

use crate::error::ReportError;
use crate::figures::{slug, Figure};
use crate::page::{Done, Page, Section, SectionBody, TableView};
use crate::summary::ClaimView;
use std::fmt::Write;

const STYLE: &str = r#"
:root { --fg: #1d1d1f; --muted: #5f6368; --line: #d9d9de; --bg2: #f6f7f9; --ok: #17753a; --no: #b3261e; }
* { box-sizing: border-box; }
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); margin: 0 auto; max-width: 1280px; padding: 1rem 1.5rem 3rem; }
h1 { font-size: 1.6rem; margin: .5rem 0 .2rem; }
h2 { font-size: 1.3rem; margin: 2.2rem 0 .6rem; border-bottom: 2px solid var(--line); padding-bottom: .2rem; }
h3 { font-size: 1.05rem; margin: 1.4rem 0 .4rem; }
.sub { color: var(--muted); margin: 0 0 1rem; }
nav ul { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: .4rem 1.2rem; }
a { color: #1a56a8; }
code, pre { font: 13px/1.4 ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; }
pre, .command { background: var(--bg2); border: 1px solid var(--line); border-radius: 4px; padding: .5rem .7rem; overflow-x: auto; }
.scroll { overflow-x: auto; margin: .4rem 0 1rem; }
table { border-collapse: collapse; font-size: 13px; }
th, td { border: 1px solid var(--line); padding: .2rem .5rem; vertical-align: top; }
th { background: var(--bg2); text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
caption { text-align: left; font-weight: 600; padding: .3rem 0; }
.legend { color: var(--muted); font-size: 12.5px; margin: .1rem 0 .8rem; }
.yes { color: var(--ok); font-weight: 600; }
.no { color: var(--no); font-weight: 600; }
.partly { color: #8a6d00; font-weight: 600; }
.notrun { color: #777; }
.failed { border-left: 4px solid var(--no); background: #fdf0ef; padding: .5rem .8rem; }
.figures { display: grid; grid-template-columns: repeat(auto-fill, minmax(520px, 1fr)); gap: 1rem; }
figure.plot { margin: 0; border: 1px solid var(--line); border-radius: 4px; padding: .5rem; background: #fff; }
figure.plot svg { display: block; width: 100%; height: auto; }
figcaption { font-size: 13px; color: var(--muted); margin-bottom: .3rem; }
figcaption strong { color: var(--fg); display: block; }
ul.notes li { margin: .2rem 0; }
@media (max-width: 600px) { .figures { grid-template-columns: 1fr; } body { padding: .5rem; } }
@media print {
  body { max-width: none; padding: 0; font-size: 11pt; }
  nav { display: none; }
  section.experiment { break-before: page; }
  figure.plot, table, .command { break-inside: avoid; }
  .figures { grid-template-columns: 1fr; } /* one chart per line: legend text >= 9 pt */
  .scroll { overflow: visible; }
  a { color: inherit; text-decoration: none; }
  @page { margin: 14mm; }
}
"#;

/// Escape text for HTML.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The whole page.
pub fn page(p: &Page) -> Result<String, ReportError> {
    let run = &p.run;
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>flashlab report — {} scale, seed {}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        esc(&run.scale),
        run.seed
    );
    let _ = write!(
        h,
        "<header><h1>flashlab: the papers' experiments, reproduced</h1>\n<p class=\"sub\">Scale {}, seed {}, device {}, run {} (flashlab {}, commit {}). Our figures are measured by this run; the paper's are labelled as the paper's.</p></header>\n",
        esc(&run.scale),
        run.seed,
        esc(&run.device),
        esc(&run.started_at),
        esc(&run.flashlab_version),
        esc(&run.git_commit)
    );
    h.push_str(&nav(p));
    h.push_str(&summary_section(p));
    for s in &p.sections {
        h.push_str(&section(s)?);
    }
    h.push_str(&run_section(p));
    h.push_str("</body>\n</html>\n");
    Ok(h)
}

fn section_id(name: &str) -> String {
    format!("exp-{}", slug(name))
}

fn nav(p: &Page) -> String {
    let mut h = String::from("<nav><ul><li><a href=\"#summary\">Summary</a></li>");
    for s in &p.sections {
        let _ = write!(
            h,
            "<li><a href=\"#{}\">{} {}</a></li>",
            section_id(&s.name),
            esc(&s.paper),
            esc(&s.name)
        );
    }
    h.push_str("<li><a href=\"#run\">Run</a></li></ul></nav>\n");
    h
}

fn summary_section(p: &Page) -> String {
    let counts = p
        .counts
        .iter()
        .map(|c| {
            format!(
                "<span class=\"{}\">{} {}</span>",
                c.mark.class(),
                c.count,
                esc(&c.verdict)
            )
        })
        .collect::<Vec<_>>()
        .join(", ");
    let mut h = format!(
        "<section id=\"summary\"><h2>Summary</h2>\n<p class=\"legend\">Each headline figure of the papers beside ours (measured by this run), with a verdict: <em>reproduced</em> within the stated tolerance (a threshold only when met), <em>direction only</em> on the paper's side but outside it, <em>not reproduced</em>, <em>not run</em>. The note says why ours differs and why the tolerance is what it is.</p>\n<p class=\"counts\">Verdicts: {counts}</p>\n<div class=\"scroll\"><table class=\"summary\"><thead><tr><th>Paper</th><th>Experiment</th><th>Claim</th><th>Paper value</th><th>Ours</th><th>Unit</th><th>Ratio</th><th>Tolerance</th><th>Verdict</th><th>Note</th></tr></thead><tbody>\n"
    );
    for c in &p.claims {
        h.push_str(&claim_row(c));
    }
    h.push_str("</tbody></table></div></section>\n");
    h
}

fn claim_row(c: &ClaimView) -> String {
    format!(
        "<tr><td>{}</td><td><a href=\"#exp-{}\">{}</a></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"{}\">{}</td><td>{}</td></tr>\n",
        esc(&c.paper),
        slug(&c.experiment),
        esc(&c.experiment),
        esc(&c.claim),
        esc(&c.paper_value),
        esc(&c.ours),
        esc(&c.unit),
        c.ratio.map_or_else(|| "—".into(), |r| format!("{r:.2}")),
        esc(&c.tolerance),
        c.mark.class(),
        esc(&c.verdict),
        esc(&c.note)
    )
}

fn section(s: &Section) -> Result<String, ReportError> {
    let mut h = String::new();
    let _ = write!(
        h,
        "<section class=\"experiment\" id=\"{}\"><h2>{} — {}</h2>\n<p>{}</p>\n<p>Re-run this experiment alone, with this run's options (its JSON into the report directory):</p>\n<pre class=\"command\"><code>{}</code></pre>\n",
        section_id(&s.name),
        esc(&s.paper),
        esc(&s.name),
        esc(&s.about),
        esc(&s.rerun_command)
    );
    let d = match &s.body {
        SectionBody::Done(d) => d,
        SectionBody::Failed {
            elapsed_seconds,
            error,
        } => {
            let _ = write!(
                h,
                "<p class=\"failed\"><strong>This experiment failed</strong> after {:.1} s: {}</p>\n</section>\n",
                elapsed_seconds,
                esc(error)
            );
            return Ok(h);
        }
    };
    let _ = writeln!(
        h,
        "<p class=\"legend\">Scale {}, seed {}, {:.1} s.</p>",
        esc(&d.scale),
        d.seed,
        d.elapsed_seconds
    );
    h.push_str(&done_body(d)?);
    Ok(h)
}

/// Figures, tables, notes and configuration of a section whose experiment ran.
fn done_body(d: &Done) -> Result<String, ReportError> {
    let mut h = String::new();
    let figs: Vec<&Figure> = d.figures.iter().filter(|f| !f.plot.is_empty()).collect();
    if !figs.is_empty() {
        h.push_str("<h3>Figures</h3>\n<div class=\"figures\">\n");
        for f in figs {
            h.push_str(&figure(f)?);
        }
        h.push_str("</div>\n");
    }
    if !d.tables.is_empty() {
        h.push_str("<h3>Tables</h3>\n");
        for t in &d.tables {
            h.push_str(&table(t));
        }
    }
    if !d.notes.is_empty() {
        h.push_str("<h3>Notes</h3>\n<ul class=\"notes\">\n");
        for n in &d.notes {
            let _ = writeln!(h, "<li>{}</li>", esc(n));
        }
        h.push_str("</ul>\n");
    }
    let _ = write!(
        h,
        "<h3>Configuration</h3>\n<pre>{}</pre>\n</section>\n",
        esc(&d.config_json)
    );
    Ok(h)
}

fn figure(f: &Figure) -> Result<String, ReportError> {
    let svg = f.plot.svg(&f.id)?;
    // Drop any XML prolog (not allowed inline) and label the image for screen readers.
    let start = svg.find("<svg").unwrap_or(0);
    let svg = svg[start..].replacen(
        "<svg",
        &format!(
            "<svg class=\"chart\" role=\"img\" aria-label=\"{}\"",
            esc(&f.title)
        ),
        1,
    );
    Ok(format!(
        "<figure class=\"plot\" id=\"fig-{}\"><figcaption><strong>{}</strong>{}</figcaption>\n{}\n</figure>\n",
        esc(&f.id),
        esc(&f.title),
        esc(&f.caption),
        svg
    ))
}

fn looks_numeric(s: &str) -> bool {
    let t = s.trim().trim_end_matches(['%', 'x', '×']).trim();
    !t.is_empty() && t.parse::<f64>().is_ok()
}

fn table(t: &TableView) -> String {
    let mut h = String::from("<div class=\"scroll\"><table class=\"data\">");
    let _ = write!(h, "<caption>{}</caption><thead><tr>", esc(&t.title));
    for c in &t.headers {
        let _ = write!(h, "<th>{}</th>", esc(c));
    }
    h.push_str("</tr></thead><tbody>\n");
    for r in &t.rows {
        h.push_str("<tr>");
        for c in r {
            let class = if looks_numeric(c) {
                " class=\"num\""
            } else {
                ""
            };
            let _ = write!(h, "<td{class}>{}</td>", esc(c));
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</tbody></table></div>\n");
    for l in &t.legend {
        let _ = writeln!(h, "<p class=\"legend\">{}</p>", esc(l));
    }
    h
}

fn run_section(p: &Page) -> String {
    let mut h = String::from(
        "<footer id=\"run\"><h2>Run</h2>\n<div class=\"scroll\"><table class=\"meta\"><tbody>\n",
    );
    for (k, v) in &p.meta {
        let _ = writeln!(h, "<tr><th>{}</th><td>{}</td></tr>", esc(k), esc(v));
    }
    h.push_str("</tbody></table></div>\n<p class=\"legend\">Re-render this page from results.json alone: <code>flashlab report DIR</code>.</p></footer>\n");
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::page::RunView;
    use crate::plot::{Chart, Line, Plot};
    use crate::summary::{CountView, Mark};

    fn a_page() -> Page {
        let chart = |points: Vec<(f64, f64)>| {
            Plot::Lines(Chart {
                lines: vec![Line::ours("ours: a", "a", points)],
                ..Chart::default()
            })
        };
        let figure = |id: &str, plot| Figure {
            id: id.into(),
            title: format!("title of {id}"),
            caption: String::new(),
            plot,
        };
        let done = Done {
            scale: "quick".into(),
            seed: 1,
            elapsed_seconds: 0.5,
            figures: vec![
                figure("drawn", chart(vec![(1.0, 2.0), (2.0, 3.0)])),
                figure("empty", chart(Vec::new())),
            ],
            tables: vec![TableView {
                title: "t".into(),
                headers: vec!["a".into()],
                rows: vec![vec!["1".into()]],
                legend: Vec::new(),
            }],
            notes: vec!["a <note>".into()],
            config_json: "{}".into(),
        };
        let section = |name: &str, body| Section {
            name: name.into(),
            paper: "P0".into(),
            about: "about".into(),
            rerun_command: format!("reproduce {name}"),
            body,
        };
        Page {
            run: RunView {
                scale: "quick".into(),
                seed: 1,
                device: "sim".into(),
                started_at: "now".into(),
                flashlab_version: "0".into(),
                git_commit: "abc".into(),
            },
            claims: Vec::new(),
            counts: vec![CountView {
                verdict: "reproduced".into(),
                mark: Mark::Yes,
                count: 0,
            }],
            sections: vec![
                section("one", SectionBody::Done(done)),
                section(
                    "Two Failed",
                    SectionBody::Failed {
                        elapsed_seconds: 1.0,
                        error: "no device".into(),
                    },
                ),
            ],
            meta: vec![("CPU".into(), "x".into())],
        }
    }

    #[test]
    fn a_page_draws_what_it_is_given_and_leaves_empty_charts_out() {
        let h = page(&a_page()).unwrap();
        assert!(h.contains("id=\"exp-one\"") && h.contains("id=\"exp-two-failed\""));
        assert_eq!(h.matches("<figure class=\"plot\"").count(), 1);
        assert!(h.contains("id=\"fig-drawn\"") && !h.contains("id=\"fig-empty\""));
        assert!(h.contains("a &lt;note&gt;"));
        assert!(h.contains("This experiment failed</strong> after 1.0 s: no device"));
        assert!(h.contains("<span class=\"yes\">0 reproduced</span>"));
        assert!(h.contains("<tr><th>CPU</th><td>x</td></tr>"));
    }

    #[test]
    fn text_is_escaped_and_numbers_are_recognised() {
        assert_eq!(esc("a<b & \"c\""), "a&lt;b &amp; &quot;c&quot;");
        assert!(looks_numeric("12.5") && looks_numeric("48 %") && looks_numeric("1.7x"));
        assert!(!looks_numeric("lru-ext") && !looks_numeric(""));
    }
}
