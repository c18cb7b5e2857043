//! The seam: a protocol is a pure function from the blackboard to the
//! next steps, and turns the answers to its questions into events.

use agon_core::{Blackboard, DebateEvent, DialogueMessage};
use chrono::{DateTime, Utc};

use crate::ask::{ConvertError, Outcome};
use crate::question::{Answers, Ask, Limits, Request};
use crate::step::{Next, Plan, Step};

/// Whether background work has stopped for good on `board`: the debate
/// reached its budget ([`Protocol::next`] then plans none) or finished. A
/// background result that lands after is not wanted.
pub fn background_over(board: &Blackboard) -> bool {
    board.budget_stop().is_some() || board.status() == agon_core::DebateStatus::Finished
}

/// A protocol: a pure function from the blackboard to the next steps.
/// Resume is "replay the log, ask the protocol again": a protocol keeps no
/// state of its own beyond its rules.
pub trait Protocol: Send + Sync {
    /// The plan for this blackboard.
    fn plan(&self, board: &Blackboard) -> Plan;

    /// The plan as the interpreter runs it: [`Protocol::plan`], except that
    /// a paused debate ([`agon_core::Blackboard::is_paused`]) runs no step a
    /// stop may precede ([`Step::is_stoppable`]) and waits instead
    /// ([`Next::Paused`]). Background work is planned as usual.
    ///
    /// Once the debate reached its budget
    /// ([`agon_core::Blackboard::budget_stop`]) no background work is
    /// planned and the next step is the protocol's [`Protocol::wrap_up`];
    /// once it spent a limit in full
    /// ([`agon_core::Blackboard::budget_exhausted`]: a call was refused)
    /// the next step is the finish, with no further model call.
    fn next(&self, board: &Blackboard) -> Plan {
        let mut plan = self.plan(board);
        if board.budget_stop().is_some() && board.status() != agon_core::DebateStatus::Finished {
            plan.background.clear();
            if board.budget_exhausted().is_some() {
                plan.progress.phase = "budget spent: finishing".into();
                plan.next = Next::step(Step::Finish(crate::Finish::default()));
            } else {
                plan.progress.phase = "budget reached: wrapping up".into();
                plan.next = Next::step(self.wrap_up(board));
            }
        }
        // Once started, the agents' trust standings are read before any
        // other step (no model call): the prompts weigh feedback by them.
        if self.weighs_by_trust()
            && board.status() == agon_core::DebateStatus::Running
            && !board.trust_read()
            && board.budget_stop().is_none()
            && matches!(plan.next, Next::Step(_))
        {
            plan.next = Next::step(Step::ReadTrust(crate::TrustRead::Standings {
                agents: board.debaters().map(|p| p.id.clone()).collect(),
            }));
        }
        // And the rubric it is judged by (the living rubric's current
        // version), once.
        if let Some(name) = self.rubric()
            && board.status() == agon_core::DebateStatus::Running
            && board.rubric().is_none()
            && board.budget_stop().is_none()
            && matches!(plan.next, Next::Step(_))
        {
            plan.next = Next::step(Step::ReadTrust(crate::TrustRead::Rubric {
                name: name.to_owned(),
            }));
        }
        if board.is_paused() && matches!(&plan.next, Next::Step(step) if step.is_stoppable()) {
            plan.next = Next::Paused;
        }
        plan
    }

    /// The step that ends a debate that reached its budget: its judge or
    /// synthesis when it has one and it is not done yet, else the finish.
    /// [`Step::Finish`] by default.
    fn wrap_up(&self, board: &Blackboard) -> Step {
        let _ = board;
        Step::Finish(crate::Finish::default())
    }

    /// Whether the agents' trust standings are read once the debate
    /// started ([`crate::TrustRead::Standings`], planned by
    /// [`Protocol::next`]) so that prompts weigh feedback by them. No by
    /// default; Agon's protocols follow their start rules
    /// ([`crate::Start::weigh_by_trust`]).
    fn weighs_by_trust(&self) -> bool {
        false
    }

    /// The living rubric the debate's output is judged by, read once it
    /// started ([`crate::TrustRead::Rubric`], planned by
    /// [`Protocol::next`]); `None` (the default) for a protocol judged by
    /// none.
    fn rubric(&self) -> Option<&'static str> {
        None
    }

    /// Which of Agon's protocols this is, recorded in `debate_started` so
    /// views need not guess; `None` (the default) for a protocol of one's
    /// own.
    fn kind(&self) -> Option<agon_core::ProtocolKind> {
        None
    }

    /// The events that follow from `message` by the protocol's own rules
    /// (no model call), appended with it in one batch; `board` is the
    /// blackboard before the message. None by default.
    fn message_events(&self, board: &Blackboard, message: &DialogueMessage) -> Vec<DebateEvent> {
        let _ = (board, message);
        Vec::new()
    }

    /// The prompt and answer form of call `call` of `ask`
    /// ([`crate::ask::request`] by default).
    fn request(
        &self,
        board: &Blackboard,
        ask: &Ask,
        call: usize,
        context: Option<&str>,
        limits: Limits,
    ) -> Result<Request, String> {
        crate::ask::request(board, ask, call, context, limits)
    }

    /// The events the answers to a question `step` become, and the step
    /// that follows, if any ([`crate::ask::convert`] by default).
    fn convert(
        &self,
        board: &Blackboard,
        debate: &agon_core::DebateId,
        step: &Step,
        answers: Answers,
        now: DateTime<Utc>,
    ) -> Result<Outcome, ConvertError> {
        crate::ask::convert(board, debate, self.kind(), step, answers, now)
    }
}
