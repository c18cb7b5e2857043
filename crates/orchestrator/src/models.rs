//! Model roles and the models that fill them.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use agon_core::PersonaId;
use agon_llm::{ChatModel, Metered, PriceTable, ProviderError, UsageLedger};

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
        let roles = Role::ALL
            .into_iter()
            .map(|r| (r, Arc::clone(&model)))
            .collect();
        Self::from_parts(roles, HashMap::new(), prices)
    }

    /// The models of one debate from a model per role and per persona
    /// (each metered into one ledger priced by `prices`); a role not in
    /// `roles` has none, so give every [`Role::ALL`].
    pub fn from_parts(
        roles: HashMap<Role, Arc<dyn ChatModel>>,
        personas: HashMap<PersonaId, Arc<dyn ChatModel>>,
        prices: PriceTable,
    ) -> Self {
        let ledger = Arc::new(UsageLedger::new(prices));
        let roles = roles
            .into_iter()
            .map(|(role, model)| (role, metered(model, &ledger, role)))
            .collect();
        let personas = personas
            .into_iter()
            .map(|(id, model)| (id, metered(model, &ledger, Role::Debater)))
            .collect();
        Self {
            roles,
            personas,
            ledger,
        }
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
