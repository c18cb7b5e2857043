//! The debate-quality metrics as report text: a section of one debate's
//! report (`agon report`, `agon show ID --metrics`) and a side-by-side
//! table of several debates (`agon compare`).

use std::fmt::Write as _;

use crate::metrics::{DebateMetrics, MEMORY_ROLES};

fn percent(value: Option<f64>) -> String {
    value.map_or_else(|| "—".to_owned(), |v| format!("{:.0} %", v * 100.0))
}

fn bits(value: Option<f64>) -> String {
    value.map_or_else(|| "—".to_owned(), |v| format!("{v:.2} bits"))
}

fn ratio(value: Option<f64>) -> String {
    value.map_or_else(|| "—".to_owned(), |v| format!("{v:.2}×"))
}

/// The rows of the metrics table: a label and the value of each debate.
fn rows(all: &[&DebateMetrics]) -> Vec<(&'static str, Vec<String>)> {
    let row = |label: &'static str, f: &dyn Fn(&DebateMetrics) -> String| {
        (label, all.iter().map(|m| f(m)).collect::<Vec<_>>())
    };
    vec![
        row("Claims resolved / opened", &|m| {
            format!("{} / {}", m.claims_resolved, m.claims_opened)
        }),
        row("Crux compression", &|m| percent(m.crux_compression)),
        row("Crux cards", &|m| {
            m.disagreement_types.values().sum::<usize>().to_string()
        }),
        row("Disagreement-type entropy", &|m| {
            bits(m.disagreement_entropy)
        }),
        row("Ledger coverage", &|m| {
            format!(
                "{} ({} of {})",
                percent(m.ledger_coverage),
                m.messages_analysed,
                m.messages
            )
        }),
        row("Concessions", &|m| {
            m.personas
                .iter()
                .map(|p| p.concessions)
                .sum::<usize>()
                .to_string()
        }),
        row("Shifts", &|m| {
            m.personas
                .iter()
                .map(|p| p.shifts)
                .sum::<usize>()
                .to_string()
        }),
        row("Stances changed", &|m| {
            format!(
                "{} of {}",
                m.personas.iter().filter(|p| p.stance_changed).count(),
                m.personas.len()
            )
        }),
        row("Evidence reuse (others')", &|m| {
            format!("{} ({})", m.evidence_reuse, m.evidence_reuse_others)
        }),
        row("Self-contradictions", &|m| {
            m.self_contradictions.to_string()
        }),
        row("Memory tokens / utterance tokens", &|m| {
            format!(
                "{} / {} = {}",
                m.memory_tokens,
                m.utterance_tokens,
                ratio(m.memory_cost)
            )
        }),
    ]
}

/// The "## Metrics" section of one debate's report.
pub fn metrics_markdown(m: &DebateMetrics) -> String {
    let mut s = String::from("## Metrics\n\n| Metric | Value |\n|---|---|\n");
    for (label, values) in rows(&[m]) {
        let _ = writeln!(s, "| {label} | {} |", values.join(""));
    }
    s.push('\n');
    if !m.disagreement_types.is_empty() {
        let types: Vec<String> = m
            .disagreement_types
            .iter()
            .map(|(t, n)| format!("{t} {n}"))
            .collect();
        let _ = writeln!(s, "Disagreement types: {}.\n", types.join(", "));
    }
    s.push_str(
        "| Persona | Messages | Concessions | Shifts | Evidence | Reused evidence | Self-contradictions | Stance start → end |\n|---|---|---|---|---|---|---|---|\n",
    );
    for p in &m.personas {
        let stance = if p.stance_changed {
            format!("{} → {}", p.initial_stance, p.final_stance)
        } else if p.final_stance.is_empty() {
            "—".to_owned()
        } else {
            format!("{} (unchanged)", p.final_stance)
        };
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            p.name,
            p.messages,
            p.concessions,
            p.shifts,
            p.evidence,
            p.evidence_reuse,
            p.self_contradictions,
            stance.replace('|', "\\|")
        );
    }
    s.push('\n');
    if !m.dissents.is_empty() {
        let useful = m.dissents.iter().filter(|d| d.impact).count();
        let _ = writeln!(
            s,
            "### Dissents (trust memory)\n\n{} dissents, {useful} changed the outcome.{}\n\n\
             | Agent | Where | Impact | Criteria | Said |\n|---|---|---|---|---|",
            m.dissents.len(),
            m.rubric.as_ref().map_or_else(String::new, |r| format!(
                " Judged by rubric {r}; the criteria are those the analysis cited."
            ))
        );
        for d in &m.dissents {
            let said: String = d.text.chars().take(120).collect();
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} |",
                d.agent,
                d.source,
                if d.impact { "yes" } else { "no" },
                d.criteria.join(", ").replace('|', "\\|"),
                said.replace('|', "\\|")
            );
        }
        s.push('\n');
    }
    let (input, cached) = m.usage.values().fold((0, 0), |(i, c), r| {
        (i + r.input_tokens, c + r.cached_input_tokens)
    });
    if cached > 0 {
        let _ = writeln!(
            s,
            "Input tokens read from a prompt cache: {cached} of {input} ({:.0} %).\n",
            100.0 * cached as f64 / input.max(1) as f64
        );
    }
    let _ = writeln!(
        s,
        "Memory tokens are the {} roles' input and output tokens; embeddings by the local model record no tokens.\n",
        MEMORY_ROLES
            .map(agon_protocol::ModelRole::as_str)
            .join(", ")
    );
    s
}

/// The metrics of several debates side by side (`agon compare`).
pub fn compare_markdown(debates: &[(String, DebateMetrics)]) -> String {
    let mut s = String::from("| Metric |");
    for (id, _) in debates {
        let _ = write!(s, " {id} |");
    }
    s.push_str("\n|---|");
    s.push_str(&"---|".repeat(debates.len()));
    s.push('\n');
    let all: Vec<&DebateMetrics> = debates.iter().map(|(_, m)| m).collect();
    for (label, values) in rows(&all) {
        let _ = writeln!(s, "| {label} | {} |", values.join(" | "));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::DissentRow;

    fn metrics() -> DebateMetrics {
        DebateMetrics {
            claims_opened: 4,
            claims_resolved: 1,
            crux_compression: Some(0.25),
            disagreement_types: [("evidence".to_owned(), 1), ("values".to_owned(), 1)].into(),
            disagreement_entropy: Some(1.0),
            messages: 10,
            messages_analysed: 9,
            ledger_coverage: Some(0.9),
            evidence_reuse: 3,
            evidence_reuse_others: 2,
            self_contradictions: 1,
            personas: vec![],
            usage: Default::default(),
            memory_tokens: 500,
            utterance_tokens: 1_000,
            memory_cost: Some(0.5),
            dissents: vec![
                DissentRow {
                    agent: "Mara".into(),
                    source: "crux room".into(),
                    impact: true,
                    criteria: vec!["Evidence".into(), "Trade-offs".into()],
                    text: "Car-free centres | raise retail footfall.".into(),
                },
                DissentRow {
                    agent: "Theo".into(),
                    source: "disagreement".into(),
                    impact: false,
                    criteria: vec![],
                    text: "the trade-off on Cost".into(),
                },
            ],
            rubric: Some("`structured` v2".into()),
        }
    }

    #[test]
    fn the_section_lists_the_debates_dissents_and_their_impact() {
        let section = metrics_markdown(&metrics());
        assert!(
            section
                .contains("2 dissents, 1 changed the outcome. Judged by rubric `structured` v2;"),
            "{section}"
        );
        assert!(
            section.contains(
                "| Mara | crux room | yes | Evidence, Trade-offs | Car-free centres \\| raise retail footfall. |"
            ),
            "{section}"
        );
        assert!(section.contains("| Theo | disagreement | no |  | the trade-off on Cost |"));
    }

    #[test]
    fn the_section_and_the_comparison_show_every_metric() {
        let m = metrics();
        let section = metrics_markdown(&m);
        for expected in [
            "| Crux compression | 25 % |",
            "| Disagreement-type entropy | 1.00 bits |",
            "| Ledger coverage | 90 % (9 of 10) |",
            "| Evidence reuse (others') | 3 (2) |",
            "| Memory tokens / utterance tokens | 500 / 1000 = 0.50× |",
            "Disagreement types: evidence 1, values 1.",
        ] {
            assert!(section.contains(expected), "{expected}\n{section}");
        }
        let table = compare_markdown(&[("a".into(), m.clone()), ("b".into(), m)]);
        assert!(
            table.starts_with("| Metric | a | b |\n|---|---|---|\n"),
            "{table}"
        );
        assert!(
            table.contains("| Crux compression | 25 % | 25 % |"),
            "{table}"
        );
    }
}
