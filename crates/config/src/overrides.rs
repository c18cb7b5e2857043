//! Settings laid over a configuration by a command line or an API request,
//! grouped by the protocol they belong to. [`DebateConfig::apply`] checks
//! that every setting given belongs to the debate's protocol and names the
//! setting that does not; the callers only read files and map their flags.

use agon_context::prompts::dialectic::RoleKind;

use crate::{ConfigError, DebateConfig, Preset, ProtocolKind, TurnMode};

/// Where [`DebateConfig::apply`]'s errors say the settings came from.
pub const OVERRIDES_SOURCE: &str = "<command line>";

/// What a command line or an API request changes in a configuration.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Overrides {
    /// The protocol (default: the configuration's).
    pub protocol: Option<ProtocolKind>,
    /// The question (structured, deliberation) or the problem (dialectic).
    pub topic: Option<String>,
    /// Background every participant should know.
    pub context: Option<String>,
    /// One model spec for every role, replacing every model the
    /// configuration names.
    pub model: Option<String>,
    /// Debaters to cast for the topic when the configuration names none
    /// (structured debate, deliberation).
    pub personas: Option<usize>,
    /// The structured debate's settings.
    pub structured: StructuredOverrides,
    /// Dialectic's settings.
    pub dialectic: DialecticOverrides,
    /// The deliberation's settings.
    pub deliberation: DeliberationOverrides,
    /// Stop at this many tokens (every protocol).
    pub max_tokens: Option<u64>,
    /// Stop at this cost in US dollars (every protocol).
    pub max_cost_usd: Option<f64>,
    /// Stop this many minutes after the start (every protocol).
    pub max_minutes: Option<f64>,
    /// The directory participants' file tools are confined to.
    pub context_dir: Option<std::path::PathBuf>,
}

/// The structured debate's settings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StructuredOverrides {
    /// Number of aspects.
    pub aspects: Option<usize>,
    /// Minirounds per aspect.
    pub minirounds: Option<u32>,
    /// One challenger per aspect, drawn by trust.
    pub challenger: bool,
}

/// Dialectic's settings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DialecticOverrides {
    /// The agents by role, in order (replacing the configuration's).
    pub agents: Option<Vec<String>>,
    /// Rounds of proposals, critiques and refinements.
    pub rounds: Option<u32>,
    /// Ask clarifying questions before round 1.
    pub clarify: bool,
    /// Clarification rounds at most (the first asking and the follow-ups).
    pub clarify_rounds: Option<u32>,
    /// One agent per round critiques as devil's advocate (on or off; the
    /// configuration's, on by default, when not given).
    pub devil_advocate: Option<bool>,
}

/// The deliberation's settings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeliberationOverrides {
    /// Turns at most.
    pub turns: Option<u32>,
    /// How speakers are picked.
    pub mode: Option<TurnMode>,
    /// The memory preset.
    pub preset: Option<Preset>,
    /// A skeptic drawn by trust speaks up as the group converges.
    pub skeptic: bool,
}

/// The names of the settings that are given.
fn given(settings: &[(&'static str, bool)]) -> Vec<&'static str> {
    settings
        .iter()
        .filter(|(_, is_given)| *is_given)
        .map(|(name, _)| *name)
        .collect()
}

impl StructuredOverrides {
    fn given(&self) -> Vec<&'static str> {
        given(&[
            ("aspects", self.aspects.is_some()),
            ("minirounds", self.minirounds.is_some()),
            ("challenger", self.challenger),
        ])
    }
}

impl DialecticOverrides {
    fn given(&self) -> Vec<&'static str> {
        given(&[
            ("agents", self.agents.is_some()),
            ("rounds", self.rounds.is_some()),
            ("clarify", self.clarify),
            ("clarify-rounds", self.clarify_rounds.is_some()),
            ("devil-advocate", self.devil_advocate.is_some()),
        ])
    }
}

impl DeliberationOverrides {
    fn given(&self) -> Vec<&'static str> {
        given(&[
            ("turns", self.turns.is_some()),
            ("mode", self.mode.is_some()),
            ("preset", self.preset.is_some()),
            ("skeptic", self.skeptic),
        ])
    }
}

fn misplaced(setting: &'static str, reason: &str) -> ConfigError {
    ConfigError::Override {
        setting,
        reason: reason.to_owned(),
    }
}

fn conflict(setting: &'static str, reason: String) -> ConfigError {
    ConfigError::Conflict { setting, reason }
}

impl DebateConfig {
    /// Lays `overrides` over this configuration and validates the result.
    /// A setting of another protocol than the debate's, or a value out of
    /// range, is a [`ConfigError::Override`] naming the setting; nothing
    /// is changed then.
    pub fn apply(&mut self, overrides: &Overrides) -> Result<(), ConfigError> {
        let protocol = overrides.protocol.unwrap_or(self.protocol);
        let not_for = |groups: &[(Vec<&'static str>, &str)]| {
            groups
                .iter()
                .find_map(|(given, reason)| given.first().map(|s| misplaced(s, reason)))
        };
        let structured = overrides.structured.given();
        let dialectic = overrides.dialectic.given();
        let deliberation = overrides.deliberation.given();
        let personas = given(&[("personas", overrides.personas.is_some())]);
        let wrong = match protocol {
            ProtocolKind::Structured => not_for(&[
                (deliberation, "is for --protocol deliberation"),
                (dialectic, "is for --protocol dialectic"),
            ]),
            ProtocolKind::Deliberation => not_for(&[
                (
                    structured,
                    "is for structured debates, not --protocol deliberation",
                ),
                (dialectic, "is for --protocol dialectic"),
            ]),
            ProtocolKind::Dialectic => not_for(&[
                (deliberation, "is for --protocol deliberation"),
                (
                    [structured, personas].concat(),
                    "is for structured debates, not --protocol dialectic",
                ),
            ]),
        };
        if let Some(e) = wrong {
            return Err(e);
        }
        let mut next = self.clone();
        next.protocol = protocol;
        next.lay(overrides)?;
        if protocol == ProtocolKind::Dialectic && next.topic == crate::DEFAULT_TOPIC {
            return Err(misplaced(
                "topic",
                "missing: a dialectic debate needs its problem",
            ));
        }
        next.validate(OVERRIDES_SOURCE)?;
        next.validate_tools(OVERRIDES_SOURCE)?;
        *self = next;
        Ok(())
    }

    /// Writes the settings (already checked to belong to the protocol).
    fn lay(&mut self, o: &Overrides) -> Result<(), ConfigError> {
        if let Some(topic) = &o.topic {
            if topic.trim().is_empty() {
                return Err(misplaced("topic", "is empty"));
            }
            self.topic = topic.trim().to_owned();
        }
        if let Some(context) = &o.context {
            self.context = Some(context.clone());
        }
        if o.max_tokens.is_some() {
            self.budget.max_tokens = o.max_tokens;
        }
        if o.max_cost_usd.is_some() {
            self.budget.max_cost_usd = o.max_cost_usd;
        }
        if o.max_minutes.is_some() {
            self.budget.max_minutes = o.max_minutes;
        }
        if let Some(dir) = &o.context_dir {
            self.context_dir = Some(dir.clone());
        }
        if let Some(n) = o.structured.aspects {
            if !self.aspects.is_empty() {
                if n > self.aspects.len() {
                    return Err(conflict(
                        "aspects",
                        format!(
                            "{n} is more than the {} aspects the config lists",
                            self.aspects.len()
                        ),
                    ));
                }
                self.aspects.truncate(n);
            }
            self.aspect_count = n;
        }
        if let Some(n) = o.structured.minirounds {
            self.minirounds = n;
        }
        if o.structured.challenger {
            self.challenger = true;
        }
        if let Some(n) = o.personas {
            if !self.personas.is_empty() {
                return Err(conflict(
                    "personas",
                    format!(
                        "casts debaters for the topic, but the config already names {}",
                        self.personas.len()
                    ),
                ));
            }
            self.persona_count = n;
        }
        let d = &mut self.deliberation;
        if let Some(n) = o.deliberation.turns {
            d.turns = n;
        }
        if let Some(mode) = o.deliberation.mode {
            d.mode = mode;
        }
        if let Some(preset) = o.deliberation.preset {
            d.preset = preset;
        }
        if o.deliberation.skeptic {
            d.skeptic = true;
        }
        self.lay_dialectic(&o.dialectic)?;
        if let Some(spec) = &o.model {
            self.use_one_model(spec);
        }
        Ok(())
    }

    fn lay_dialectic(&mut self, o: &DialecticOverrides) -> Result<(), ConfigError> {
        if let Some(roles) = &o.agents {
            let roles = roles
                .iter()
                .filter(|r| !r.trim().is_empty())
                .map(|r| {
                    r.parse::<RoleKind>()
                        .map_err(|e| misplaced("agents", &e.to_string()))
                })
                .collect::<Result<Vec<_>, _>>()?;
            if roles.is_empty() {
                return Err(misplaced("agents", "the agent list is empty"));
            }
            self.dialectic.select_roles(&roles);
        }
        if let Some(rounds) = o.rounds {
            if rounds < 1 {
                return Err(misplaced("rounds", "must be at least 1"));
            }
            self.dialectic.rounds = rounds;
        }
        if let Some(on) = o.devil_advocate {
            self.dialectic.devil_advocate = on;
        }
        if o.clarify {
            self.dialectic.clarify = true;
        }
        if let Some(n) = o.clarify_rounds {
            if !(1..=10).contains(&n) {
                return Err(misplaced("clarify-rounds", "must be within 1..=10"));
            }
            self.dialectic.clarify_rounds = n;
            self.dialectic.clarify = true;
        }
        Ok(())
    }

    /// `spec` in every role, for every persona and every dialectic agent.
    fn use_one_model(&mut self, spec: &str) {
        let m = &mut self.models;
        m.default = spec.to_owned();
        for role in [
            &mut m.debater,
            &mut m.extractor,
            &mut m.detector,
            &mut m.reflector,
            &mut m.crux,
            &mut m.judge,
            &mut m.evaluator,
        ] {
            *role = None;
        }
        for p in &mut self.personas {
            p.model = None;
        }
        for a in &mut self.dialectic.agents {
            a.model = None;
        }
        self.dialectic.judge.model = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_setting_of_another_protocol_is_named_and_changes_nothing() {
        let mut config = DebateConfig::default();
        let before = config.clone();
        let o = Overrides {
            dialectic: DialecticOverrides {
                rounds: Some(2),
                ..Default::default()
            },
            ..Default::default()
        };
        let e = config.apply(&o).unwrap_err();
        assert_eq!(
            e.to_string(),
            "rounds: is for --protocol dialectic",
            "structured debate given a dialectic setting"
        );
        assert_eq!(config, before);
        let o = Overrides {
            protocol: Some(ProtocolKind::Dialectic),
            topic: Some("Design a rate limiter".into()),
            personas: Some(3),
            ..Default::default()
        };
        let e = config.apply(&o).unwrap_err();
        assert_eq!(
            e.to_string(),
            "personas: is for structured debates, not --protocol dialectic"
        );
        let o = Overrides {
            protocol: Some(ProtocolKind::Deliberation),
            structured: StructuredOverrides {
                minirounds: Some(2),
                ..Default::default()
            },
            ..Default::default()
        };
        let e = config.apply(&o).unwrap_err();
        assert!(e.to_string().starts_with("minirounds: "), "{e}");
        assert_eq!(config, before);
    }

    #[test]
    fn settings_of_the_protocol_are_laid_over_and_validated() {
        let mut config = DebateConfig::default();
        config
            .apply(&Overrides {
                protocol: Some(ProtocolKind::Dialectic),
                topic: Some("  Design a rate limiter\n".into()),
                model: Some("openai:gpt-4o-mini".into()),
                dialectic: DialecticOverrides {
                    agents: Some(vec!["security".into(), "kiss".into()]),
                    rounds: Some(2),
                    clarify: true,
                    clarify_rounds: Some(2),
                    devil_advocate: Some(false),
                },
                max_tokens: Some(50_000),
                ..Default::default()
            })
            .unwrap();
        assert!(!config.dialectic.devil_advocate, "--no-devil-advocate");
        assert_eq!(config.budget.max_tokens, Some(50_000));
        assert_eq!(config.protocol, ProtocolKind::Dialectic);
        assert_eq!(config.topic, "Design a rate limiter");
        assert_eq!(
            (
                config.dialectic.rounds,
                config.dialectic.clarify,
                config.dialectic.clarify_rounds
            ),
            (2, true, 2)
        );
        assert_eq!(config.dialectic.enabled_agents().count(), 2);
        assert_eq!(config.models.default, "openai:gpt-4o-mini");

        let mut config = DebateConfig::default();
        config
            .apply(&Overrides {
                protocol: Some(ProtocolKind::Deliberation),
                deliberation: DeliberationOverrides {
                    turns: Some(40),
                    mode: Some(TurnMode::Listen),
                    preset: Some(Preset::Long),
                    skeptic: true,
                },
                ..Default::default()
            })
            .unwrap();
        assert_eq!(config.deliberation.turns, 40);
        assert_eq!(config.deliberation.mode, TurnMode::Listen);
        assert!(config.deliberation.skeptic);

        let mut config = DebateConfig::default();
        let e = config
            .apply(&Overrides {
                structured: StructuredOverrides {
                    minirounds: Some(0),
                    ..Default::default()
                },
                ..Default::default()
            })
            .unwrap_err();
        assert!(e.to_string().contains("minirounds"), "{e}");
        let e = config
            .apply(&Overrides {
                protocol: Some(ProtocolKind::Dialectic),
                topic: Some("p".into()),
                dialectic: DialecticOverrides {
                    agents: Some(vec!["wizard".into()]),
                    ..Default::default()
                },
                ..Default::default()
            })
            .unwrap_err();
        assert!(e.to_string().starts_with("agents: "), "{e}");
    }
}
