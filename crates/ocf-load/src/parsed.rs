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

use ocf_formula::{Formula, FormulaError};
use rustc_hash::FxHashMap;

/// A formula's parse: the lowered formula or its errors.
pub type Parse = Rc<Result<Formula, Vec<FormulaError>>>;

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

/// `Formula::parse(text)`, from the memo when a scope has one and has parsed `text` already.
pub fn parse(text: &str) -> Parse {
    if let Some(known) = MEMO.with(|memo| memo.borrow().as_ref()?.get(text).cloned()) {
        return known;
    }
    let parsed = Rc::new(Formula::parse(text));
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
        assert_eq!(*a, Formula::parse("1 + 2"));
    }
}
