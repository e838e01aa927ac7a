//! A derived character's field values shared with the character it was derived from (an
//! action's proposed sheet, [`CharacterInput::derive_from`]): a field whose value on the given
//! sheet read only what the derived character holds as it is is that value, so a proposed sheet
//! after one change re-executes that change's dependents, not every field a step reads.
//!
//! What a field's value read is recorded with it ([`crate::reads`]): the fields, by ID, the
//! views of the character (a copy's `self`, `character`, `links`) and whether it read anything
//! else; besides those it reads its own saved value, its own effect instances and the ruleset.
//! The value is the same on the derived character when each of those is, the fields read judged
//! the same way in turn, as listOptions' trials judge which fields a pick can reach. What a
//! value reads without recording it (the character's `competing` picks, an applied entry's
//! state as its `self`) must be the same for any field to be shared ([`shares_with_given`]).

use std::cell::Cell;
use std::sync::Arc;

use crate::db::{
    CharacterInput, FieldKey, FieldValue, field_value, same_as_given, saved_handle,
    shares_with_given,
};

use crate::reads::View;

/// How deep the fields a shared value read are followed on one thread before a value is
/// computed instead: the check runs on the caller's stack, which may be an ordinary thread's.
const MAX_DEPTH: usize = 256;

thread_local! {
    static DEPTH: Cell<usize> = const { Cell::new(0) };
    /// Whether a debug build computes a shared value again to check it ([`checked`]).
    static CHECK: Cell<bool> = const { Cell::new(true) };
}

/// Whether a debug build checks each shared value against the value computed on the derived
/// character (every test and conformance case does, but those that count what ran).
pub(crate) fn checked() -> bool {
    cfg!(debug_assertions) && CHECK.with(Cell::get)
}

/// Whether no character was derived in `db` (one of ours).
pub(crate) fn none_in(db: &dyn salsa::Database) -> bool {
    let any: &dyn std::any::Any = db;
    any.downcast_ref::<crate::Database>()
        .is_some_and(|ours| ours.derived() == 0)
}

/// The given character's value of `key`'s field when `key`'s character is derived and the field's
/// value is the same on it.
pub(crate) fn given_value(db: &dyn salsa::Database, key: FieldKey<'_>) -> Option<Arc<FieldValue>> {
    // A database no character was derived in (most: a proposed sheet derives in its given
    // character's) has none to share with, and its values needn't depend on their character's
    // `derived_from`, which they would all read: a cold sheet's 2 000 fields paid 2 % for it. The
    // count only grows with the database, and a character derived later is new, so a value it
    // kept from before holds.
    if none_in(db) {
        return None;
    }
    let character = key.character(db);
    let given = character.derived_from(db)?;
    if !same_as_given(db, key) {
        return None;
    }
    let theirs = FieldKey::new(db, given, key.field(db).clone());
    Some(field_value(db, theirs).clone())
}

/// Whether what a derived character's field values read without recording it is the same as
/// on the character it was derived from: the ruleset, the character's ID and `creating`, its
/// `applied` entries, `competing` picks and links, and the templates content keeps on copies.
pub(crate) fn shares_with_given_query(db: &dyn salsa::Database, character: CharacterInput) -> bool {
    let Some(given) = character.derived_from(db) else {
        return false;
    };
    character.ruleset(db) == given.ruleset(db)
        && character.id(db) == given.id(db)
        && character.creating(db) == given.creating(db)
        && character.applied(db) == given.applied(db)
        && character.competing(db) == given.competing(db)
        && character.saved_links(db) == given.saved_links(db)
        && character.passed_links(db) == given.passed_links(db)
        && character.kept(db) == given.kept(db)
}

/// The character a derived character has its activations from (an action's proposed sheet
/// after a change of values): the one it was derived from, when what the walk reads is the same
/// on both. That is what [`shares_with_given`] compares, the copies (the same handles: a
/// derived character shares an unchanged copy's), the rules-level picks, and what the given
/// walk's conditions read, each input field's saved value; a condition that read a view or
/// anything else is not judged.
pub(crate) fn shares_activations_with(
    db: &dyn salsa::Database,
    character: CharacterInput,
) -> Option<CharacterInput> {
    if none_in(db) {
        return None;
    }
    let given = character.derived_from(db)?;
    if !shares_with_given(db, character)
        || character.features(db) != given.features(db)
        || character.inventory(db) != given.inventory(db)
        || character.choices(db) != given.choices(db)
    {
        return None;
    }
    let read = &crate::db::activations(db, given).reads;
    let saved = |c, f: &str| saved_handle(db, FieldKey::new(db, c, f)).map(|h| h.value(db));
    (!read.other
        && read.views.is_empty()
        && read
            .fields
            .iter()
            .all(|f| saved(character, f) == saved(given, f)))
    .then_some(given)
}

/// Whether `key`'s field has the same value on its (derived) character as on the given one.
pub(crate) fn same_as_given_query<'db>(db: &'db dyn salsa::Database, key: FieldKey<'db>) -> bool {
    stacker::maybe_grow(
        crate::depth::STACK_RED_ZONE,
        crate::depth::STACK_SEGMENT,
        || judge(db, key),
    )
}

fn judge<'db>(db: &'db dyn salsa::Database, key: FieldKey<'db>) -> bool {
    let character = key.character(db);
    let Some(given) = character.derived_from(db) else {
        return false;
    };
    if !shares_with_given(db, character) {
        return false;
    }
    let Some(_depth) = crate::depth::DepthGuard::enter(&DEPTH, MAX_DEPTH) else {
        return false;
    };
    let theirs = FieldKey::new(db, given, key.field(db).clone());
    let read = &field_value(db, theirs).reads;
    // The fields read first: a change is most often found down the fields a value reads, and
    // then a value's own saved value and effects need no look.
    let saved = |k| saved_handle(db, k).map(|h| h.value(db));
    !read.other
        && read
            .fields
            .iter()
            .all(|f| same_as_given(db, FieldKey::new(db, character, &**f)))
        && read
            .views
            .iter()
            .all(|view| same_view(db, character, given, *view))
        && saved(key) == saved(theirs)
        && crate::db::field_effects(db, key) == crate::db::field_effects(db, theirs)
}

pub(crate) fn not_same<'db>(
    _db: &'db dyn salsa::Database,
    _id: salsa::Id,
    _key: FieldKey<'db>,
) -> bool {
    false
}

/// Whether a view reads the same on both characters. The views read input fields raw, never a
/// field value, so comparing them here sits on no loop with the values.
fn same_view(
    db: &dyn salsa::Database,
    character: CharacterInput,
    given: CharacterInput,
    view: View,
) -> bool {
    match view {
        View::Copy(copy) => {
            crate::db::copy_self(db, character, copy) == crate::db::copy_self(db, given, copy)
        }
        View::Character => {
            crate::db::character_view(db, character) == crate::db::character_view(db, given)
        }
        View::Links => crate::db::links(db, character) == crate::db::links(db, given),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Session;
    use ocf_synthetic::Synthetic;

    /// The field values that ran to read `read` on the character derived with `g:score0` saved
    /// as 18, its value there, and its value on a sheet with the score saved so from the start.
    fn derived_read(read: &str) -> (Vec<String>, Arc<FieldValue>, Arc<FieldValue>) {
        let size = Synthetic::with_fields(200).expect("a size");
        let mut session = Session::with_execution_log(size.ruleset());
        let pc = session.open(&size.character(14), &[]);
        session.sheet(pc).expect("the sheet");
        session.take_executed();
        let db = session.db(pc).expect("open");
        let given = session.character_input(pc).expect("open");
        let derived = given.derive(db, &size.character(18));
        CHECK.with(|c| c.set(false));
        let value = field_value(db, FieldKey::new(db, derived, &*format!("g:{read}"))).clone();
        CHECK.with(|c| c.set(true));
        let ran = session
            .take_executed()
            .into_iter()
            .filter(|q| q.starts_with("field_value"))
            .collect();
        let mut fresh = Session::new(size.ruleset());
        let id = fresh.open(&size.character(18), &[]);
        let expected = fresh.field(id, &format!("g:{read}")).expect("open");
        (ran, value, expected)
    }

    /// The derived character's whole sheet, shared values and all, is the sheet of a session
    /// opened on the file: over edits of a value, a copy's `equipped` (which an item's effect
    /// reads as `self.equipped`) and state, copies removed and added.
    #[test]
    fn a_derived_sheet_is_the_files_sheet() {
        let size = Synthetic::with_fields(200).expect("a size");
        let rules = Arc::new(size.ruleset());
        let mut session = Session::shared(rules.clone());
        let base = size.character(14);
        let pc = session.open(&base, &[]);
        session.sheet(pc).expect("the sheet");
        let edits: [fn(&mut ocf_model::Character); 6] = [
            |c| {
                c.values.0.insert("g:score3".into(), serde_json::json!(18));
            },
            |c| c.inventory[0].equipped = Some(false),
            |c| c.inventory[1].equipped = Some(true),
            |c| {
                c.inventory.remove(2);
            },
            |c| {
                let mut again = c.inventory[4].clone();
                again.id = "again".into();
                c.inventory.push(again);
            },
            |c| {
                c.inventory[5]
                    .state
                    .0
                    .insert("note".into(), serde_json::json!(1));
            },
        ];
        for (n, edit) in edits.iter().enumerate() {
            let mut file = base.clone();
            edit(&mut file);
            let db = session.db(pc).expect("open");
            let given = session.character_input(pc).expect("open");
            let derived = given.derive(db, &file);
            let sheet = crate::sheet::collect(db, derived);
            let mut fresh = Session::shared(rules.clone());
            let id = fresh.open(&file, &[]);
            let expected = fresh.sheet(id).expect("open");
            assert_eq!(sheet.fields.len(), expected.fields.len());
            for ((field, mine), (_, theirs)) in sheet.fields.iter().zip(expected.fields.iter()) {
                assert_eq!(mine, theirs, "edit {n}: {field}");
            }
        }
    }

    #[test]
    fn a_value_the_change_does_not_reach_is_the_given_sheets() {
        // `g:f11` reads `g:f1` and `g:mod1`, which read `g:score1`, not the changed score: its
        // value is the given sheet's, and nothing under it runs.
        let (ran, value, expected) = derived_read("f11");
        assert_eq!(value, expected);
        assert_eq!(ran, ["field_value(g:f11)"]);
    }

    #[test]
    fn a_value_the_change_reaches_runs_with_the_change_s_dependents_only() {
        // `g:f10` reads `g:f0` and `g:mod0`, which read `g:score0`: they run again, and
        // nothing else does.
        let (ran, value, expected) = derived_read("f10");
        assert_eq!(value, expected);
        assert_eq!(
            ran,
            [
                "field_value(g:f10)",
                "field_value(g:f0)",
                "field_value(g:mod0)",
                "field_value(g:score0)"
            ]
        );
    }
}
