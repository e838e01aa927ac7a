//! A slot for what an engine works out of a ruleset once (its parsed formulas, its field names
//! resolved) and shares with every clone of the ruleset: every session and database opened on it.
//! The model stays plain data ("Formulas may be kept as text and parsed when first used"): the
//! slot holds whatever its first user puts in it, is never serialized, and two rulesets are equal
//! whatever their slots hold.

use std::any::Any;
use std::fmt;
use std::sync::{Arc, OnceLock};

/// What was derived from a ruleset, shared by its clones. A ruleset changed after its slot was
/// filled must get a fresh one ([`Derived::default`]): the slot describes the ruleset as it was.
#[derive(Clone, Default)]
pub struct Derived(Arc<OnceLock<Arc<dyn Any + Send + Sync>>>);

impl Derived {
    /// The derived value, made by `init` on first use. `None` if the slot already holds a value of
    /// another type (two engines sharing one ruleset): the caller then works without it.
    pub fn get_or_init<T: Any + Send + Sync>(&self, init: impl FnOnce() -> T) -> Option<&T> {
        self.0
            .get_or_init(|| Arc::new(init()))
            .as_ref()
            .downcast_ref::<T>()
    }

    /// A slot already holding `value`.
    pub fn with<T: Any + Send + Sync>(value: T) -> Derived {
        let slot = OnceLock::new();
        let _ = slot.set(Arc::new(value) as Arc<dyn Any + Send + Sync>);
        Derived(Arc::new(slot))
    }

    /// What the slot holds, if it holds a `T`.
    pub fn get<T: Any + Send + Sync>(&self) -> Option<&T> {
        self.0.get()?.as_ref().downcast_ref::<T>()
    }
}

impl PartialEq for Derived {
    /// A cache, not part of the ruleset's value.
    fn eq(&self, _: &Derived) -> bool {
        true
    }
}

impl fmt::Debug for Derived {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Derived")
    }
}
