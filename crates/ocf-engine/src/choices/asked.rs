//! What listOptions, a `choose` and the trial sheets ask of one choice (EC "Pending choices and
//! issues", DA "listOptions"): its options in order, its own recommendation, whether a value is
//! one of its options, whether an option is eligible on a trial sheet, and the issues a pick
//! would raise without one. The sheet's own lists are the parent's ([`super::choice_lists`]).

use ocf_model::{ChoiceOptions, ChoiceSource, Literal};
use serde_json::{Value as Json, json};

use super::{Checker, choice_order, literal_text};
use crate::context::{Mode, SheetContext};
use crate::db::{Activations, CharacterInput};
use crate::report::path_json;

/// The options of the choice `record` (an index in [`Activations::choices`]) in the choice's
/// order, hidden content skipped; shared with listOptions ([`crate::options`]).
pub(crate) fn options_of(
    db: &dyn salsa::Database,
    character: CharacterInput,
    acts: &Activations,
    record: usize,
) -> Vec<Literal> {
    let checker = Checker::new(db, character, acts);
    checker.candidates(&acts.choices[record])
}

/// The choice's own recommendation (its `recommend`; DA, over pending choices: "without it the
/// choice's own recommendation applies"): the formula evaluated as the choice's other formulas are
/// (the owner's `self` and `item`, `slot`), when it gives one of the choice's options (content
/// qualified). A formula that fails or names no option recommends nothing.
pub(crate) fn recommended_of(
    db: &dyn salsa::Database,
    character: CharacterInput,
    acts: &Activations,
    record: usize,
) -> Option<Literal> {
    let r = &acts.choices[record];
    let formula = r.decl.recommend.as_ref()?;
    let checker = Checker::new(db, character, acts);
    let ctx = SheetContext::new(db, character, Mode::Sheet, checker.bindings(r));
    let value = ctx.evaluate(formula.as_str()).ok()?;
    option_of(db, character, acts, record, &value.to_json())
}

/// Whether `option` is one of the choice's options at all, the test of a `choose`'s
/// `invalid-option`: an inline option's ID, a listed value, a value the formula lists now, or
/// content of the query's type (hidden content included: picking it is `content-hidden`, not an
/// invalid pick). Eligibility (`where`, `eligible`) is not asked: a pick failing it is
/// `option-not-eligible` on the sheet. Content is given back qualified.
pub(crate) fn option_of(
    db: &dyn salsa::Database,
    character: CharacterInput,
    acts: &Activations,
    record: usize,
    option: &Literal,
) -> Option<Literal> {
    let checker = Checker::new(db, character, acts);
    let r = &acts.choices[record];
    match &r.decl.options {
        ChoiceOptions::Source(ChoiceSource::Content { content }) => {
            let id = checker.content_option(r, option)?;
            let entry = checker.ruleset.item(&id)?;
            checker
                .of_type(r, entry.type_name(), content.r#type.as_str())
                .then_some(Literal::String(id))
        }
        _ => checker.candidates(r).into_iter().find(|o| {
            o == option || literal_text(o) == literal_text(option) && o.as_str().is_some()
        }),
    }
}

/// Whether `option` is eligible on a trial sheet: the character `trial` has it picked in the
/// choice `record` (an index in its activations' choices), and it passes the choice's checks and
/// its prerequisites hold there, as listOptions' trial sheet judges it ([`crate::option_trials`]).
pub(crate) fn eligible_on_trial(
    db: &dyn salsa::Database,
    trial: CharacterInput,
    acts: &Activations,
    record: usize,
    option: &Literal,
) -> bool {
    let checker = Checker::new(db, trial, acts);
    let r = &acts.choices[record];
    checker.pick_eligible(r, option) && checker.prerequisites_hold(r, option)
}

/// The issues the sheet would raise against `option` if it were picked in the choice `record`
/// (an index in [`Activations::choices`]), found without a trial sheet, for a choice no file can
/// hold picks of (an applied entry's: decisions.md, "listOptions"): `option-not-eligible` when it
/// fails the choice's checks, `prerequisite-not-met` for an inline option's prerequisites that are
/// false, `already-picked` when another choice of its `unique` group picked it. Each is written as
/// [`choice_lists`] writes it.
pub(crate) fn untried_reasons(
    db: &dyn salsa::Database,
    character: CharacterInput,
    acts: &Activations,
    record: usize,
    option: &Literal,
) -> Vec<Json> {
    let checker = Checker::new(db, character, acts);
    let r = &acts.choices[record];
    let path = path_json(r.entry.as_deref(), &r.path);
    let issue = |code: &str, data: Json| {
        json!({
            "code": code,
            "id": checker.issue_id(r),
            "source": checker.source(r),
            "data": data,
        })
    };
    let mut reasons = Vec::new();
    if let Some(text) = option.as_str() {
        for prerequisite in checker.failed_prerequisites(r, text) {
            let mut pick = r.path.clone();
            pick.push(text.to_owned());
            reasons.push(json!({
                "code": "prerequisite-not-met",
                "id": checker.prerequisite_id(r, prerequisite),
                "source": checker.source(r),
                "data": { "path": path_json(r.entry.as_deref(), &pick) },
            }));
        }
    }
    if !checker.pick_eligible(r, option) {
        reasons.push(issue(
            "option-not-eligible",
            json!({ "path": path, "option": option }),
        ));
    }
    let groups = checker.unique_groups(&choice_order(acts));
    if let Some(key) = groups.key.get(&record) {
        let qualified = checker.content_option(r, option);
        let earlier = groups.picks[key].iter().find(|(e, o)| {
            *e != record
                && (o == option
                    || qualified.is_some()
                        && checker.content_option(&acts.choices[*e], o) == qualified)
        });
        if let Some((e, _)) = earlier
            && !checker.repeatable(r, option)
        {
            let e = &acts.choices[*e];
            reasons.push(issue(
                "already-picked",
                json!({
                    "path": path,
                    "option": option,
                    "earlier": path_json(e.entry.as_deref(), &e.path),
                }),
            ));
        }
    }
    reasons
}
