//! `self.<key>` in a content item's own formulas against the keys a copy of it can have (issue 41's
//! `self.atuned`). EC "Copies and `self`": `self` holds `id`, `equipped`, `quantity`, `templates`
//! and "each state key declared by the content type, the item or its templates", and in the copy's
//! own actions its computed values; an applied entry's `self` is its `id` and the state keys its
//! source's content type or item declares. Content granted or picked on a copy (a class's
//! features, a monster's traits) reads that copy as `self`, so which declarations a formula's
//! `self` has depends on who holds the item: the check takes every state key and computed value
//! declared anywhere in the pack and its dependencies. A name none of them declares can never be
//! read: the formula fails on every sheet, or its `has()` is always false. The build warns
//! (`unknown-name`, the checker's code for a member a map doesn't hold) with the nearest declared
//! name.
//!
//! Only formulas where `self` is the item's own copy or entry are read: its effects, choices, grants
//! and computed values, and incoming effects' `then`. Action steps and changes are not: a choice
//! step over copies, a change aimed at `copies` or `applied` entries bind `self` to another copy.
//! Checked only when every rules file of the pack read and its dependencies are given, in the
//! formula type check's own pass over the formulas ([`super::types::TypeCheck`]).

use ocf_formula::Root;
use ocf_formula::lowered::Expr;
use ocf_model::{PackRelease, nearest_key};
use rustc_hash::FxHashSet;

use super::problem::Problem;
use super::types::Source;
use crate::formulas::{self, Document, FoundFormula};

/// What every copy's `self` holds whatever its declarations (EC).
const BUILT_IN: &[&str] = &["id", "equipped", "quantity", "templates"];

/// Every state key and computed value the pack and its dependencies declare.
pub struct SelfKeys<'a> {
    keys: FxHashSet<&'a str>,
}

impl<'a> SelfKeys<'a> {
    pub fn of(release: &'a PackRelease, dependencies: &[&'a PackRelease]) -> SelfKeys<'a> {
        let mut keys: FxHashSet<&str> = BUILT_IN.iter().copied().collect();
        for pack in std::iter::once(release).chain(dependencies.iter().copied()) {
            for (_, ty) in pack.rules.content_types.iter() {
                keys.extend(ty.state.iter().map(|(k, _)| k));
                keys.extend(ty.computed.iter().map(|(k, _)| k));
            }
            for item in pack.content.iter() {
                keys.extend(item.state.iter().map(|(k, _)| k));
                keys.extend(item.computed.iter().map(|(k, _)| k));
            }
        }
        SelfKeys { keys }
    }

    /// A warning for each `self.<name>` of `found` (a content item's formula where `self` is its
    /// own copy) that no declaration gives, placed in `source`.
    pub fn check(&self, found: &FoundFormula, source: &Source<'_>, problems: &mut Vec<Problem>) {
        if !matches!(found.document, Document::Content(_))
            || !formulas::self_is_the_owner(found.roots)
            || found.pointer.contains("/copies/")
        {
            return;
        }
        let parsed = crate::parsed::parse(&found.text);
        let Ok(formula) = &*parsed else {
            return;
        };
        let lowered = formula.lowered();
        let mut reported: FxHashSet<&str> = FxHashSet::default();
        for (_, expr) in lowered.exprs.iter() {
            let Expr::Member { base, name } = expr else {
                continue;
            };
            if !matches!(lowered.exprs[*base], Expr::Root(Root::SelfCopy))
                || self.keys.contains(&**name)
                || !reported.insert(name)
            {
                continue;
            }
            let suggestion = nearest_key(name, self.keys.iter().copied());
            let mut message = format!(
                "`self.{name}`: no content type or item of the pack or its dependencies declares \
                 a state key or computed value `{name}`, so no copy ever has it"
            );
            if let Some(suggestion) = suggestion {
                message.push_str(&format!(", did you mean `{suggestion}`?"));
            }
            let pointer = format!("{}{}", source.prefix, found.pointer);
            let place = source
                .locations
                .text(&pointer)
                .or_else(|| source.locations.value(&pointer));
            let mut problem = Problem::warning("unknown-name", message)
                .in_file(source.file)
                .at(&pointer, place)
                .with("key", &**name)
                .with("formula", found.text.as_str());
            if let Some(suggestion) = suggestion {
                problem = problem.with("suggestion", suggestion);
            }
            problems.push(problem);
        }
    }
}
