//! What the runtime asks of the odds while an action runs (issue 45): the [`Branch`] a run's
//! checkpoints carry when the odds drive it, what the runs share ([`Memo`]), and the bounds on the work. Below `roll/`, `steps/` and `odds/`,
//! which import it; the odds themselves ([`crate::odds`]) drive whole runs above them.

use std::collections::HashMap;

use num_rational::BigRational;
use ocf_dice::{DiceError, DiceLimits, DiceTerm, DiceValue};
use serde_json::Value as Json;

use crate::error::ActionError;

/// The most outcome classes one roll may have.
pub const MAX_CLASSES: usize = 5_000;

pub(crate) fn too_large(message: String) -> ActionError {
    ActionError::new("distribution-too-large", message)
}

/// What the runtime asks of the odds while an action runs (`Checkpoints::odds`).
pub trait Branch {
    /// Picks one of the classes (their probabilities given) at the step `path`.
    fn choose(&mut self, probabilities: &[BigRational], path: &str) -> Result<usize, ActionError>;
    /// The outcomes of a handoff's run (`needs` is the pause the runtime would give), with their
    /// probabilities.
    fn handoff(&mut self, needs: &Json) -> Result<Vec<(BigRational, Json)>, ActionError>;
    fn memo(&mut self) -> &mut Memo;
}

/// What the runs share: each term's distribution, each action's text, each handoff's outcomes.
#[derive(Default)]
pub struct Memo {
    pub(crate) distributions: HashMap<String, ocf_dice::Distribution>,
    pub(crate) texts: HashMap<String, std::sync::Arc<str>>,
    pub(crate) handoffs: HashMap<String, Vec<(BigRational, Json)>>,
}

impl Memo {
    pub(crate) fn distribution(
        &mut self,
        term: &DiceTerm,
    ) -> Result<&ocf_dice::Distribution, ActionError> {
        let key = format!("{term:?}");
        if !self.distributions.contains_key(&key) {
            let d = term_distribution(term)?;
            self.distributions.insert(key.clone(), d);
        }
        Ok(&self.distributions[&key])
    }

    pub(crate) fn action_text(&mut self, id: &str, def: &ocf_model::Action) -> std::sync::Arc<str> {
        self.texts
            .entry(id.to_owned())
            .or_insert_with(|| serde_json::to_string(def).unwrap_or_default().into())
            .clone()
    }
}

/// A dice value's exact distribution, as the odds take it: the probability of the rolls the
/// roller would stop with `safety-limit-exceeded` is left out (`truncated`).
pub(crate) fn term_distribution(term: &DiceTerm) -> Result<ocf_dice::Distribution, ActionError> {
    let value = DiceValue::from_term(term.clone());
    ocf_dice::distribution(&value, &DiceLimits::default()).map_err(dice_error)
}

pub(crate) fn dice_error(e: DiceError) -> ActionError {
    ActionError::new(e.code(), format!("{e:?}"))
}
