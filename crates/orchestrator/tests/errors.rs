//! The orchestrator's errors: each has the kind a front door maps to an
//! exit code or an HTTP status, and names its debate.

use agon_orchestrator::{ErrorKind, OrchestratorError};

#[test]
fn every_error_has_the_kind_the_cli_maps_to_an_exit_code() {
    let debate = || "d-1".to_owned();
    let cases = [
        (
            OrchestratorError::AspectPlan {
                debate: debate(),
                reason: "no usable aspect".into(),
            },
            ErrorKind::Provider,
        ),
        (
            OrchestratorError::Background {
                debate: debate(),
                reason: "disk full".into(),
            },
            ErrorKind::Store,
        ),
        (
            OrchestratorError::Replay {
                debate: debate(),
                source: agon_core::ApplyError::Finished {
                    debate: debate(),
                    event: "message_appended",
                },
            },
            ErrorKind::Store,
        ),
        (
            OrchestratorError::UnknownPersona {
                debate: debate(),
                persona: "zed".into(),
            },
            ErrorKind::Internal,
        ),
        (
            OrchestratorError::Stalled {
                debate: debate(),
                phase: "closings".into(),
            },
            ErrorKind::Internal,
        ),
        (
            OrchestratorError::Budget {
                debate: debate(),
                source: agon_context::ContextBudget::new(1).unwrap_err(),
            },
            ErrorKind::Config,
        ),
    ];
    for (error, kind) in cases {
        assert_eq!(error.kind(), kind, "{error}");
        assert!(
            error.to_string().contains("d-1"),
            "{error} names the debate"
        );
    }
}
