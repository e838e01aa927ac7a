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
//! Checked only when every rules file of the pack read and its dependencies are given.

use ocf_formula::Root;
use ocf_formula::lowered::Expr;
use ocf_model::{PackRelease, nearest_key};
use rustc_hash::FxHashSet;

use super::content::Placed;
use super::problem::Problem;
use crate::formulas::{self, Document};

/// What every copy's `self` holds whatever its declarations (EC).
const BUILT_IN: &[&str] = &["id", "equipped", "quantity", "templates"];

pub fn check(
    release: &PackRelease,
    dependencies: &[&PackRelease],
    placed: &[Placed<'_>],
    problems: &mut Vec<Problem>,
) {
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
    for found in formulas::collect(release) {
        let Document::Content(index) = found.document else {
            continue;
        };
        if !formulas::self_is_the_owner(found.roots) || found.pointer.contains("/copies/") {
            continue;
        }
        let Some(at) = placed.get(index) else {
            continue;
        };
        let parsed = crate::parsed::parse(&found.text);
        let Ok(formula) = &*parsed else {
            continue;
        };
        let lowered = formula.lowered();
        let mut reported: FxHashSet<&str> = FxHashSet::default();
        for (_, expr) in lowered.exprs.iter() {
            let Expr::Member { base, name } = expr else {
                continue;
            };
            if !matches!(lowered.exprs[*base], Expr::Root(Root::SelfCopy))
                || keys.contains(&**name)
                || !reported.insert(name)
            {
                continue;
            }
            let suggestion = nearest_key(name, keys.iter().copied());
            let mut message = format!(
                "`self.{name}`: no content type or item of the pack or its dependencies declares \
                 a state key or computed value `{name}`, so no copy ever has it"
            );
            if let Some(suggestion) = suggestion {
                message.push_str(&format!(", did you mean `{suggestion}`?"));
            }
            let pointer = format!("{}{}", at.pointer, found.pointer);
            let place = at
                .locations
                .text(&pointer)
                .or_else(|| at.locations.value(&pointer));
            let mut problem = Problem::warning("unknown-name", message)
                .in_file(at.file)
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
