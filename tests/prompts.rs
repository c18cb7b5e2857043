//! Snapshot tests: every prompt Agon sends a model, built from the fixture
//! debate. A change to any prompt shows up here as a reviewed diff.

use agon_context::prompts::{self, Prompt, Utterance};
use agon_core::{Blackboard, PersonaId};

use crate::fixture;

fn show(name: &str, prompt: &Prompt) -> String {
    format!(
        "===== {name} / system =====\n{}\n===== {name} / user =====\n{}\n",
        prompt.system, prompt.user
    )
}

fn utterance(bb: &Blackboard, persona: &str, what: &Utterance) -> String {
    let persona = bb.persona(&PersonaId::new(persona)).unwrap();
    show(
        &format!("utterance {what:?}"),
        &Prompt {
            system: prompts::debater_system(bb, 120),
            user: prompts::utterance_instruction(bb, persona, what),
        },
    )
}

#[test]
fn every_utterance_prompt() {
    let bb = fixture::blackboard();
    let claim = agon_core::ClaimId::new("claim-1");
    let mut out = String::new();
    for what in [
        Utterance::Opening,
        Utterance::Take {
            aspect: "accounting".into(),
            miniround: 0,
            challenger: false,
        },
        Utterance::Take {
            aspect: "accounting".into(),
            miniround: 2,
            challenger: false,
        },
        Utterance::Take {
            aspect: "accounting".into(),
            miniround: 1,
            challenger: true,
        },
        Utterance::CruxPosition {
            claim: claim.clone(),
        },
        Utterance::CruxExchange { claim },
        Utterance::Closing,
    ] {
        out.push_str(&utterance(&bb, "mara", &what));
    }
    out.push_str(&show(
        "synthesis",
        &Prompt {
            system: prompts::judge_system(&bb, 150),
            user: prompts::judge_brief(&bb, 4_800),
        },
    ));
    insta::assert_snapshot!(out);
}

#[test]
fn every_extraction_prompt() {
    let bb = fixture::blackboard();
    let mut out = String::new();
    let message = "m24".into();
    out.push_str(&show(
        "analysis, combined",
        &prompts::analysis(&bb, &message, 10).unwrap(),
    ));
    out.push_str(&show(
        "analysis, position only",
        &prompts::analysis(&bb, &message, 0).unwrap(),
    ));
    out.push_str(&show(
        "batch analysis of a miniround, judged",
        &prompts::batch_analysis(&bb, &["m22".into(), "m23".into(), message.clone()], 10, 3)
            .unwrap(),
    ));
    out.push_str(&show(
        "disagreement window",
        &prompts::disagreement_window(&bb, &message, 10).unwrap(),
    ));
    out.push_str(&show(
        "round record",
        &prompts::round_record(&bb, &"opportunity".into()).unwrap(),
    ));
    out.push_str(&show("reflection", &prompts::reflection(&bb)));
    out.push_str(&show(
        "convergence check",
        &prompts::convergence(&bb, &"room-1".into()).unwrap(),
    ));
    out.push_str(&show(
        "crux card",
        &prompts::crux_card(&bb, &"room-1".into()).unwrap(),
    ));
    out.push_str(&show(
        "aspect plan",
        &prompts::aspect_plan("Should a mid-size company hold Bitcoin in its treasury?", 3),
    ));
    insta::assert_snapshot!(out);
}
