//! Each formula parsed once per build or load. The build checks a formula's syntax, its loops, its
//! type, and then loads the release it made, whose formula check parses it again: five or six parses
//! of the same text, about a third of `ocf sheet`'s instructions before this memo. Inside
//! [`scope`], [`parse`] keeps what it parsed by text, so every step after the first shares it.
//!
//! The memo lives for one scope (a build, or a loadRuleset not inside a build) and is dropped at its
//! end, so it holds at most the formulas of what is being read, which the read limits bound.
//! Parsing is pure, so a parse shared is the parse each step would have made.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use ocf_formula::partial::Plan;
use ocf_formula::{Formula, FormulaError};
use rustc_hash::FxHashMap;

/// A formula's parse: the lowered formula or its errors.
pub type Parse = Rc<Result<Arc<Formula>, Vec<FormulaError>>>;

/// The formulas a load parsed, by text, as the loaded ruleset keeps them ([`kept`];
/// `Ruleset::parsed`): an engine takes them up instead of parsing the same texts again. With them,
/// the roll summary's plans of the band sets' conditions and values ([`Kept::plan`]).
#[derive(Default)]
pub struct Kept {
    pub formulas: FxHashMap<Box<str>, Arc<Formula>>,
    /// Each band set's `value` and band `when`, planned around `roll` (EA "The roll summary":
    /// what the roll is rolled against, worked out before any face), by text.
    pub plans: FxHashMap<Box<str>, Arc<Plan>>,
}

impl Kept {
    pub fn get(&self, text: &str) -> Option<&Arc<Formula>> {
        self.formulas.get(text)
    }

    /// The summary's plan of a band set's condition or value, when the load made it.
    pub fn plan(&self, text: &str) -> Option<&Arc<Plan>> {
        self.plans.get(text)
    }

    /// Plans every band set's `value` and band `when` of `ruleset` (the texts that parse).
    pub fn plan_bands(&mut self, ruleset: &ocf_model::Ruleset) {
        for (_, set) in ruleset.bands.iter() {
            let texts = set
                .decl
                .value
                .iter()
                .chain(set.decl.bands.iter().map(|b| &b.when));
            for text in texts {
                if self.plans.contains_key(text.as_str()) {
                    continue;
                }
                if let Some(plan) = Plan::of_text(text.as_str(), "roll") {
                    self.plans.insert(text.as_str().into(), Arc::new(plan));
                }
            }
        }
    }
}

/// The formulas the current scope's memo parsed without error (none outside a scope).
pub fn kept() -> Kept {
    MEMO.with(|memo| {
        let memo = memo.borrow();
        let Some(memo) = memo.as_ref() else {
            return Kept::default();
        };
        Kept {
            formulas: memo
                .iter()
                .filter_map(|(text, parse)| match &**parse {
                    Ok(formula) => Some((text.clone(), Arc::clone(formula))),
                    Err(_) => None,
                })
                .collect(),
            plans: FxHashMap::default(),
        }
    })
}

thread_local! {
    static MEMO: RefCell<Option<FxHashMap<Box<str>, Parse>>> = const { RefCell::new(None) };
}

/// Runs `f` with a memo of parsed formulas; a scope inside another shares the outer memo.
pub fn scope<T>(f: impl FnOnce() -> T) -> T {
    /// Drops the memo at the end of the scope that made it, even if `f` unwinds.
    struct Outer(bool);
    impl Drop for Outer {
        fn drop(&mut self) {
            if self.0 {
                MEMO.with(|memo| *memo.borrow_mut() = None);
            }
        }
    }
    let outer = MEMO.with(|memo| {
        let mut memo = memo.borrow_mut();
        let outer = memo.is_none();
        if outer {
            *memo = Some(FxHashMap::default());
        }
        outer
    });
    let _outer = Outer(outer);
    f()
}

/// A memo kept between scopes by a caller that builds the same formulas again and again (the
/// language server, one build per keystroke): the caller bounds it with [`Memo::clear`].
#[derive(Default)]
pub struct Memo(FxHashMap<Box<str>, Parse>);

impl Memo {
    /// How many formulas it holds.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn clear(&mut self) {
        self.0.clear();
    }
}

/// Runs `f` as [`scope`] does, its memo `memo`: what `f` parses stays in it after. Inside another
/// scope, the outer memo is used and `memo` is left as it is.
pub fn scope_in<T>(memo: &mut Memo, f: impl FnOnce() -> T) -> T {
    /// Gives the memo back to its owner at the end, even if `f` unwinds.
    struct GiveBack<'a>(Option<&'a mut Memo>);
    impl Drop for GiveBack<'_> {
        fn drop(&mut self) {
            if let Some(owner) = self.0.take() {
                owner.0 = MEMO
                    .with(|memo| memo.borrow_mut().take())
                    .unwrap_or_default();
            }
        }
    }
    let installed = MEMO.with(|slot| {
        let mut slot = slot.borrow_mut();
        if slot.is_some() {
            return false;
        }
        *slot = Some(std::mem::take(&mut memo.0));
        true
    });
    let _give_back = GiveBack(installed.then_some(memo));
    f()
}

/// `Formula::parse(text)`, from the memo when a scope has one and has parsed `text` already.
pub fn parse(text: &str) -> Parse {
    if let Some(known) = MEMO.with(|memo| memo.borrow().as_ref()?.get(text).cloned()) {
        return known;
    }
    let parsed = Rc::new(Formula::parse(text).map(Arc::new));
    MEMO.with(|memo| {
        if let Some(memo) = memo.borrow_mut().as_mut() {
            memo.insert(text.into(), Rc::clone(&parsed));
        }
    });
    parsed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scope_shares_parses_and_forgets_them_after() {
        let (a, b) = scope(|| (parse("1 + 2"), parse("1 + 2")));
        assert!(Rc::ptr_eq(&a, &b));
        assert!(MEMO.with(|memo| memo.borrow().is_none()));
        // Outside a scope nothing is kept.
        assert!(!Rc::ptr_eq(&parse("1 + 2"), &parse("1 + 2")));
        // A nested scope uses the outer memo and leaves it in place.
        scope(|| {
            let a = parse("3");
            let b = scope(|| parse("3"));
            assert!(Rc::ptr_eq(&a, &b));
            assert!(MEMO.with(|memo| memo.borrow().is_some()));
        });
        assert_eq!(*a, Formula::parse("1 + 2").map(Arc::new));
    }

    #[test]
    fn a_kept_memo_outlives_its_scope() {
        let mut memo = Memo::default();
        let a = scope_in(&mut memo, || parse("1 + 2"));
        assert_eq!(memo.len(), 1);
        assert!(MEMO.with(|memo| memo.borrow().is_none()));
        let b = scope_in(&mut memo, || parse("1 + 2"));
        assert!(Rc::ptr_eq(&a, &b));
        // Inside a scope, the outer memo is the one used.
        scope(|| scope_in(&mut memo, || parse("4")));
        assert_eq!(memo.len(), 1);
    }
}
