//! The time profile printed when a run ends: where the wall time went, by
//! model role (the debaters' contributions, the extractor's analyses, the
//! judge, …), split into prompt processing and generation for the models
//! that report it (the in-process ones), and the time no model computed
//! (the store, context assembly, and waits on the critical path).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Duration;

use agon_llm::{ModelTime, ScopeUsage, UsageScope};

/// One role's calls, over every model that answered for it.
#[derive(Debug, Default, Clone, Copy)]
struct RoleTime {
    calls: u64,
    input_tokens: u64,
    output_tokens: u64,
    time: ModelTime,
}

fn seconds(d: Duration) -> String {
    format!("{:.1} s", d.as_secs_f64())
}

/// The profile of a run that took `wall`, from the usage ledger's scopes
/// of that run (role, and model).
pub(crate) fn time_profile(wall: Duration, scopes: &BTreeMap<UsageScope, ScopeUsage>) -> String {
    let mut roles: BTreeMap<&str, RoleTime> = BTreeMap::new();
    for (scope, usage) in scopes {
        let role = roles.entry(scope.role.as_str()).or_default();
        role.calls += usage.calls;
        role.input_tokens += usage.usage.input_tokens;
        role.output_tokens += usage.usage.output_tokens;
        role.time += usage.time;
    }
    let mut total = ModelTime::default();
    for role in roles.values() {
        total += role.time;
    }
    let compute = total.compute.prompt + total.compute.generation;
    let mut out = format!("Time: {} in all", seconds(wall));
    if compute > Duration::ZERO {
        let _ = write!(
            out,
            "; the models computed {} (prompts {}, generation {}); no model computed for {} \
             (store, context assembly, waits)",
            seconds(compute),
            seconds(total.compute.prompt),
            seconds(total.compute.generation),
            seconds(wall.saturating_sub(compute)),
        );
    }
    out.push('\n');
    let _ = writeln!(
        out,
        "  {:<12} {:>5} {:>9} {:>9} {:>11} {:>16}",
        "role", "calls", "wall", "prompt", "generation", "tokens in / out"
    );
    for (name, role) in &roles {
        let (prompt, generation) = if role.time.compute == Default::default() {
            ("-".to_owned(), "-".to_owned())
        } else {
            (
                seconds(role.time.compute.prompt),
                seconds(role.time.compute.generation),
            )
        };
        let _ = writeln!(
            out,
            "  {:<12} {:>5} {:>9} {:>9} {:>11} {:>16}",
            name,
            role.calls,
            seconds(role.time.wall),
            prompt,
            generation,
            format!("{} / {}", role.input_tokens, role.output_tokens),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use agon_llm::{CallTiming, Usage};

    use super::*;

    fn scope(
        role: &str,
        model: &str,
        calls: u64,
        wall: u64,
        compute: Option<(u64, u64)>,
    ) -> (UsageScope, ScopeUsage) {
        let (prompt, generation) = compute.unwrap_or((0, 0));
        (
            UsageScope::per_model(role, model),
            ScopeUsage {
                calls,
                usage: Usage::new(100 * calls, 10 * calls),
                time: ModelTime {
                    wall: Duration::from_millis(wall),
                    compute: CallTiming {
                        prompt: Duration::from_millis(prompt),
                        generation: Duration::from_millis(generation),
                    },
                },
                ..ScopeUsage::default()
            },
        )
    }

    #[test]
    fn roles_sum_their_models_and_the_idle_time_is_what_no_model_computed() {
        let scopes = BTreeMap::from([
            scope("debater", "a", 2, 3_000, Some((1_000, 1_500))),
            scope("debater", "b", 1, 1_000, Some((200, 700))),
            scope("extractor", "a", 3, 6_000, Some((2_000, 3_800))),
        ]);
        let profile = time_profile(Duration::from_secs(12), &scopes);
        assert!(
            profile.starts_with(
                "Time: 12.0 s in all; the models computed 9.2 s (prompts 3.2 s, generation 6.0 s); \
                 no model computed for 2.8 s"
            ),
            "{profile}"
        );
        assert!(
            profile.contains(
                "  debater          3     4.0 s     1.2 s       2.2 s         300 / 30\n"
            ),
            "{profile}"
        );
        assert!(
            profile.contains(
                "  extractor        3     6.0 s     2.0 s       3.8 s         300 / 30\n"
            ),
            "{profile}"
        );
    }

    #[test]
    fn a_remote_model_shows_its_wall_time_only() {
        let scopes = BTreeMap::from([scope("judge", "gpt-4o", 1, 2_500, None)]);
        let profile = time_profile(Duration::from_secs(3), &scopes);
        assert!(profile.starts_with("Time: 3.0 s in all\n"), "{profile}");
        assert!(
            profile.contains(
                "  judge            1     2.5 s         -           -         100 / 10\n"
            ),
            "{profile}"
        );
    }
}
