//! Trust weights feedback (seed 003): the prompts that show an agent's
//! feedback (the critiques a proposal received, the judge's view of the
//! positions) name it with its standing in the trust memory, read when
//! the debate started, and put the feedback of trusted agents first.
//! Agents with no memory yet are named plainly and count as new.

use agon_core::{Blackboard, PersonaId};
use agon_trust::INITIAL_TRUST;

/// `persona`'s name with its standing when the debate read one: `Ada
/// (trust 0.82)`, `Bob (low trust 0.15, on probation)`; plain otherwise.
pub fn labelled_name(bb: &Blackboard, persona: &PersonaId) -> String {
    let name = bb.persona_name(persona);
    match bb.trust_standing(persona) {
        Some(standing) => format!("{name} ({})", standing.label()),
        None => name.to_owned(),
    }
}

/// `persona`'s trust, for ordering its feedback (no memory: the initial
/// trust of a new agent).
pub fn trust_of(bb: &Blackboard, persona: &PersonaId) -> f64 {
    bb.trust_standing(persona)
        .map_or(INITIAL_TRUST, agon_core::TrustStanding::trust)
}

/// Whether any of `personas` has a standing (the prompt then says how its
/// feedback is ordered and labelled).
pub fn any_standing<'a>(
    bb: &Blackboard,
    mut personas: impl Iterator<Item = &'a PersonaId>,
) -> bool {
    personas.any(|p| bb.trust_standing(p).is_some())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use agon_core::TrustStanding;
    use agon_core::{DebateEvent, Persona, Topic};

    use super::*;

    fn board(standings: &[(&str, u16, bool)]) -> Blackboard {
        let mut bb = Blackboard::new();
        bb.apply(&DebateEvent::DebateStarted {
            debate: agon_core::DebateId::new("d"),
            topic: Topic::new("t"),
            personas: ["ada", "bob", "cy"]
                .into_iter()
                .map(|id| Persona::debater(id, id.to_uppercase(), "x", "y"))
                .collect(),
            aspects: Vec::new(),
            protocol: None,
            time: chrono::DateTime::UNIX_EPOCH,
        })
        .unwrap();
        let standings: BTreeMap<PersonaId, TrustStanding> = standings
            .iter()
            .map(|(id, milli, probation)| {
                (
                    PersonaId::new(*id),
                    TrustStanding {
                        trust_milli: *milli,
                        on_probation: *probation,
                    },
                )
            })
            .collect();
        bb.apply(&DebateEvent::TrustStandingsRead { standings })
            .unwrap();
        bb
    }

    #[test]
    fn known_agents_are_labelled_and_new_ones_are_not() {
        let bb = board(&[("ada", 820, false), ("bob", 150, true)]);
        assert_eq!(
            labelled_name(&bb, &PersonaId::new("ada")),
            "ADA (trust 0.82)"
        );
        assert_eq!(
            labelled_name(&bb, &PersonaId::new("bob")),
            "BOB (low trust 0.15, on probation)"
        );
        assert_eq!(labelled_name(&bb, &PersonaId::new("cy")), "CY");
        assert_eq!(trust_of(&bb, &PersonaId::new("cy")), INITIAL_TRUST);
        assert!((trust_of(&bb, &PersonaId::new("bob")) - 0.15).abs() < 1e-9);
        assert!(any_standing(&bb, [PersonaId::new("ada")].iter()));
        assert!(!any_standing(&bb, [PersonaId::new("cy")].iter()));
    }

    #[test]
    fn the_structured_judges_positions_carry_trust_and_the_reflection_does_not() {
        let bb = board(&[("ada", 820, false), ("bob", 150, true)]);
        let brief = crate::prompts::judge_brief(&bb, 10_000);
        assert!(brief.contains("- ADA (trust 0.82): "), "{brief}");
        assert!(
            brief.contains("- BOB (low trust 0.15, on probation): "),
            "{brief}"
        );
        assert!(brief.contains("- CY: "), "{brief}");
        let reflection = crate::prompts::reflection(&bb);
        assert!(!reflection.user.contains("trust 0."), "{}", reflection.user);
    }
}
