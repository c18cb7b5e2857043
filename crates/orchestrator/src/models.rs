//! Model roles and the models that fill them.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use agon_core::PersonaId;
use agon_llm::{
    ChatModel, Fallback, Metered, ModelFactory, PriceTable, ProviderError, UsageLedger,
};

use agon_config::{DebateConfig, parse_chain};

/// What a model call is for (the protocols name the role of each call).
pub use agon_protocol::ModelRole as Role;

/// The models of one debate: one per role, optional per-persona debater
/// models, every call metered into one ledger (scope: the role and the
/// model that answered).
#[derive(Clone)]
pub struct Models {
    roles: HashMap<Role, Arc<dyn ChatModel>>,
    personas: HashMap<PersonaId, Arc<dyn ChatModel>>,
    ledger: Arc<UsageLedger>,
}

impl fmt::Debug for Models {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Models");
        for role in Role::ALL {
            if let Some(m) = self.roles.get(&role) {
                d.field(role.as_str(), &m.model_id());
            }
        }
        d.finish_non_exhaustive()
    }
}

/// `model` metered under its role and the model that answered.
fn metered(model: Arc<dyn ChatModel>, ledger: &Arc<UsageLedger>, role: Role) -> Arc<dyn ChatModel> {
    Arc::new(Metered::per_model(
        model,
        Arc::clone(ledger),
        role.to_string(),
    ))
}

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

/// A model that cannot be built, naming the role or persona.
#[derive(Debug, thiserror::Error)]
#[error("model for {what} (`{spec}`): {source}")]
pub struct ModelError {
    /// Role or persona.
    pub what: String,
    /// The spec.
    pub spec: String,
    /// Why.
    #[source]
    pub source: Box<ProviderError>,
}

impl Models {
    /// The same model in every role.
    pub fn uniform(model: Arc<dyn ChatModel>, prices: PriceTable) -> Self {
        let ledger = Arc::new(UsageLedger::new(prices));
        let roles = Role::ALL
            .into_iter()
            .map(|r| (r, metered(Arc::clone(&model), &ledger, r)))
            .collect();
        Self {
            roles,
            personas: HashMap::new(),
            ledger,
        }
    }

    /// Builds the models a config names (each distinct spec once).
    pub fn from_config(
        config: &DebateConfig,
        factory: &ModelFactory,
        lookup: &dyn Fn(&str) -> Option<String>,
        prices: PriceTable,
    ) -> Result<Self, ModelError> {
        let ledger = Arc::new(UsageLedger::new(prices));
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
            let model = build(format!("role {role}"), spec)?;
            roles.insert(role, metered(model, &ledger, role));
        }
        let mut personas = HashMap::new();
        for (id, spec) in run.persona_models {
            let model = build(format!("persona {id}"), &spec)?;
            personas.insert(PersonaId::new(id), metered(model, &ledger, Role::Debater));
        }
        Ok(Self {
            roles,
            personas,
            ledger,
        })
    }

    /// The model for `role`; for debater turns, the persona's own model if set.
    pub fn get(&self, role: Role, persona: Option<&PersonaId>) -> Arc<dyn ChatModel> {
        if role == Role::Debater
            && let Some(m) = persona.and_then(|p| self.personas.get(p))
        {
            return Arc::clone(m);
        }
        match self.roles.get(&role) {
            Some(m) => Arc::clone(m),
            None => Arc::clone(&self.roles[&Role::Debater]),
        }
    }

    /// The usage ledger of every call made through these models.
    pub fn ledger(&self) -> &Arc<UsageLedger> {
        &self.ledger
    }
}
