//! The models a debate's configuration names, built with a factory: what
//! a `Runtime` gives a run.

use std::collections::HashMap;
use std::sync::Arc;

use agon_config::{DebateConfig, parse_chain};
use agon_core::PersonaId;
use agon_llm::{ChatModel, Fallback, ModelFactory, PriceTable, ProviderError};
use agon_orchestrator::{ModelError, Models, Role};

/// Builds the model of a spec or a fallback chain of specs; `what` names
/// the role, persona or evaluator in errors.
pub fn build_chain(
    what: &str,
    spec: &str,
    factory: &ModelFactory,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<Arc<dyn ChatModel>, ModelError> {
    let err = |source| ModelError {
        what: what.to_owned(),
        spec: spec.to_owned(),
        source: Box::new(source),
    };
    let chain = parse_chain(spec).map_err(|e| {
        err(ProviderError::InvalidRequest {
            reason: e.to_string(),
        })
    })?;
    let mut models = chain
        .iter()
        .map(|s| factory.build(s, lookup))
        .collect::<Result<Vec<_>, _>>()
        .map_err(err)?;
    if models.len() == 1 {
        return Ok(models.remove(0));
    }
    Ok(Arc::new(Fallback::new(models).map_err(err)?) as Arc<dyn ChatModel>)
}

/// Builds the models a configuration names, every role's and every
/// persona's (a spec may be a fallback chain), with `factory`; keys are
/// read through `lookup`.
pub fn models_from_config(
    config: &DebateConfig,
    factory: &ModelFactory,
    lookup: &dyn Fn(&str) -> Option<String>,
    prices: PriceTable,
) -> Result<Models, ModelError> {
    let run = config.resolve().run;
    let m = &config.models;
    let build = |what: String, spec: &str| build_chain(&what, spec, factory, lookup);
    let mut roles = HashMap::new();
    for role in Role::ALL {
        let spec = match role {
            Role::Debater => m.debater.as_ref(),
            Role::Extractor => m.extractor.as_ref(),
            Role::Detector => m.detector.as_ref(),
            Role::Reflector => m.reflector.as_ref(),
            Role::Crux => m.crux.as_ref(),
            Role::Judge => m.judge.as_ref(),
            Role::Evaluator => m.evaluator.as_ref().or(m.extractor.as_ref()),
        }
        .unwrap_or(&m.default);
        let spec = match (role, run.judge_model.as_deref()) {
            (Role::Judge, Some(judge)) => judge,
            _ => spec.as_str(),
        };
        roles.insert(role, build(format!("role {role}"), spec)?);
    }
    let mut personas = HashMap::new();
    for (id, spec) in run.persona_models {
        let model = build(format!("persona {id}"), &spec)?;
        personas.insert(PersonaId::new(id), model);
    }
    Ok(Models::from_parts(roles, personas, prices))
}
