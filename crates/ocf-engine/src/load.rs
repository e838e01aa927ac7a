//! A character loaded in one pass (EC "The character as engines see it"): read (the file, parsed
//! by `ocf-model` before it gets here), checked (what the ruleset can't take left out, as the
//! file's `errors`: [`crate::file_check`]), completed with its standard copies (EC "Standard
//! copies": [`crate::standard`]) whose saved state is then checked, then split into the
//! database's inputs ([`crate::input`]). Each step is a module of its own and none calls back
//! into the one before: [`view`] and [`CharacterInput::load`] run them in order.

use std::sync::Arc;

use ocf_model::{Character, Ruleset};
use serde_json::Value as Json;

use crate::db::{CharacterInput, RulesetInput};
use crate::file_check::{checked, checked_state};
use crate::standard::{StandardView, standard_copies};

/// `character` as the engines see it: checked, then with its standard copies, then their saved
/// state checked (a copy's state is checked against its templates, kept ones included, so once
/// the copies are found).
pub fn view(ruleset: &Arc<Ruleset>, character: &Character) -> StandardView {
    // What the ruleset can't take is left out first, so standard copies and activation never see
    // it (decisions.md, "Character files").
    let (file, errors) = checked(ruleset, character);
    let mut view = standard_copies(ruleset, file, errors);
    checked_state(ruleset, character, &mut view.character, &mut view.errors);
    view
}

/// `character` with its standard copies, and the `errors` of what was left out ([`view`]).
pub fn with_standard_copies(
    ruleset: &Arc<Ruleset>,
    character: &Character,
) -> (Character, Vec<Json>) {
    let view = view(ruleset, character);
    (view.character, view.errors)
}

impl CharacterInput {
    /// Splits `character` into inputs of `db`.
    pub fn load(
        db: &dyn salsa::Database,
        ruleset: RulesetInput,
        character: &Character,
        competing: &[String],
    ) -> CharacterInput {
        let rules = ruleset.ruleset(db).clone();
        let view = view(&rules, character);
        CharacterInput::load_as_is(
            db,
            ruleset,
            &view.character,
            competing,
            view.errors,
            view.kept,
        )
    }

    /// `file`'s inputs of `db` on `self`'s ruleset, with the views `self` was passed for its link
    /// slots: the character as a batch leaves `self`, read without editing `self` (an action's
    /// proposed sheet in ocf-actions, EA "The proposed sheet"). Ruleset-level work (items, parsed
    /// formulas) is shared with `self`, and so are `self`'s saved values and copies that `file`
    /// holds as they are, with what reads only them; what reads the character is computed when
    /// first read. The inputs it makes stay in `db` as long as `db` lives
    /// ([`crate::Database::derived`]).
    pub fn derive(self, db: &crate::Database, file: &Character) -> CharacterInput {
        let rules = self.ruleset(db).ruleset(db).clone();
        let view = view(&rules, file);
        self.derive_checked(db, &view.character, view.errors, view.kept)
    }
}
