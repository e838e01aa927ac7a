//! The database's inputs: the ruleset, and a character split so that one edit touches one input.
//!
//! A character is a [`CharacterInput`] whose fields salsa tracks one by one, plus one [`CopyInput`]
//! per copy and one [`SavedValue`] per input field. Setting a saved value, equipping a copy or
//! editing the `applied` list therefore invalidates only the queries that read that one thing.
//!
//! Durability (decisions.md, "Durability"): the ruleset is [`Durability::HIGH`]; a character's
//! structure (its lists, copies, applied entries, picks, links) and its saved values as opened are
//! [`STRUCTURE`]; a saved value becomes [`EDITED`] at its first edit. After an edit of a value
//! edited before, salsa re-verifies only the memos that read an edited value: the rest of the
//! sheet, the activations, the effect lists and parsed formulas pass on a durability check alone.

use std::sync::Arc;

/// Declared in the query map ([`crate::db`]); kept here for the crates above.
pub use crate::db::held_file;
use ocf_model::{AppliedEntry, Character, CopyEntry, Literal, Picks, Ruleset};
use rustc_hash::FxHashMap;
use salsa::{Durability, Setter};

/// The durability of a character's structure, and of its saved values until they are edited: a
/// character's lists, copies, applied entries and picks change less often than its values, and
/// most of its values are never edited in a session.
pub const STRUCTURE: Durability = Durability::MEDIUM;

/// The durability of a saved value from its first edit on: what a player edits, they edit again
/// (hit points, a score being typed). Its first edit re-runs every memo that reads it, once,
/// without backdating (salsa backdates a memo only if its durability didn't drop); from then on,
/// an edit of it re-verifies only the memos that read an edited value, not the whole sheet.
pub const EDITED: Durability = Durability::LOW;

/// The loaded ruleset. Set with [`Durability::HIGH`]: it changes only when packs are reloaded, so
/// salsa can skip re-validating everything that reads only the ruleset after a character edit.
#[salsa::input(debug)]
pub struct RulesetInput {
    #[returns(ref)]
    pub ruleset: Arc<Ruleset>,
}

impl RulesetInput {
    pub fn load(db: &dyn salsa::Database, ruleset: Arc<Ruleset>) -> RulesetInput {
        RulesetInput::builder(ruleset)
            .durability(Durability::HIGH)
            .new(db)
    }
}

/// A ruleset held by a memo's value, the same when it is the same `Arc`: a value laid out by a
/// ruleset's fields (an effect index, a character's table of keys) is new when the ruleset is
/// another, whatever it declares.
#[derive(Clone)]
pub(crate) struct SameRuleset(pub(crate) Arc<Ruleset>);

impl PartialEq for SameRuleset {
    fn eq(&self, other: &SameRuleset) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl std::fmt::Debug for SameRuleset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SameRuleset(..)")
    }
}

/// Which list of the character file a copy is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CopyList {
    Features,
    Inventory,
}

/// One copy (an entry of `features` or `inventory`). Each property is its own tracked field, so
/// equipping a shield does not invalidate what reads only the shield's state.
#[salsa::input(debug)]
pub struct CopyInput {
    #[returns(copy)]
    pub ruleset: RulesetInput,
    #[returns(copy)]
    pub list: CopyList,
    #[returns(ref)]
    pub id: String,
    /// The content ID as saved.
    #[returns(ref)]
    pub item: String,
    #[returns(copy)]
    pub equipped: bool,
    #[returns(copy)]
    pub quantity: u64,
    #[returns(ref)]
    pub state: Arc<ocf_model::Keyed<Literal>>,
    #[returns(ref)]
    pub templates: Arc<Vec<String>>,
    #[returns(ref)]
    pub choices: Arc<Picks>,
}

impl CopyInput {
    /// A copy, part of the character's [`STRUCTURE`].
    pub fn from_entry(
        db: &dyn salsa::Database,
        ruleset: RulesetInput,
        list: CopyList,
        entry: &CopyEntry,
    ) -> CopyInput {
        CopyInput::builder(
            ruleset,
            list,
            entry.id.clone(),
            entry.item.0.clone(),
            entry.equipped.unwrap_or(false),
            entry.quantity.unwrap_or(1),
            Arc::new(entry.state.clone()),
            Arc::new(entry.templates.iter().map(|t| t.0.clone()).collect()),
            Arc::new(entry.choices.clone()),
        )
        .durability(STRUCTURE)
        .new(db)
    }

    /// Makes this removed copy `entry`, a copy of the character's [`STRUCTURE`], setting the
    /// properties that differ (a copy removed and added again changes nothing).
    pub(crate) fn refill(
        self,
        db: &mut dyn salsa::Database,
        ruleset: RulesetInput,
        list: CopyList,
        entry: &CopyEntry,
    ) {
        let d = STRUCTURE;
        if self.ruleset(&*db) != ruleset {
            self.set_ruleset(db).with_durability(d).to(ruleset);
        }
        if self.list(&*db) != list {
            self.set_list(db).with_durability(d).to(list);
        }
        if *self.id(&*db) != entry.id {
            self.set_id(db).with_durability(d).to(entry.id.clone());
        }
        if *self.item(&*db) != entry.item.0 {
            self.set_item(db)
                .with_durability(d)
                .to(entry.item.0.clone());
        }
        let equipped = entry.equipped.unwrap_or(false);
        if self.equipped(&*db) != equipped {
            self.set_equipped(db).with_durability(d).to(equipped);
        }
        let quantity = entry.quantity.unwrap_or(1);
        if self.quantity(&*db) != quantity {
            self.set_quantity(db).with_durability(d).to(quantity);
        }
        if **self.state(&*db) != entry.state {
            self.set_state(db)
                .with_durability(d)
                .to(Arc::new(entry.state.clone()));
        }
        let templates: Vec<String> = entry.templates.iter().map(|t| t.0.clone()).collect();
        if **self.templates(&*db) != templates {
            self.set_templates(db)
                .with_durability(d)
                .to(Arc::new(templates));
        }
        if **self.choices(&*db) != entry.choices {
            self.set_choices(db)
                .with_durability(d)
                .to(Arc::new(entry.choices.clone()));
        }
    }

    /// Whether this copy is `entry` of `list`, as [`CopyInput::from_entry`] would make it.
    pub(crate) fn holds(
        self,
        db: &dyn salsa::Database,
        ruleset: RulesetInput,
        list: CopyList,
        entry: &CopyEntry,
    ) -> bool {
        self.ruleset(db) == ruleset
            && self.list(db) == list
            && *self.id(db) == entry.id
            && *self.item(db) == entry.item.0
            && self.equipped(db) == entry.equipped.unwrap_or(false)
            && self.quantity(db) == entry.quantity.unwrap_or(1)
            && **self.state(db) == entry.state
            && self.templates(db).len() == entry.templates.len()
            && self
                .templates(db)
                .iter()
                .zip(&entry.templates)
                .all(|(a, b)| *a == b.0)
            && **self.choices(db) == entry.choices
    }

    /// Whether this copy holds what copy `other` of `other_db` holds.
    fn same_as(
        self,
        db: &dyn salsa::Database,
        other: CopyInput,
        other_db: &dyn salsa::Database,
    ) -> bool {
        self.list(db) == other.list(other_db)
            && self.id(db) == other.id(other_db)
            && self.item(db) == other.item(other_db)
            && self.equipped(db) == other.equipped(other_db)
            && self.quantity(db) == other.quantity(other_db)
            && self.state(db) == other.state(other_db)
            && self.templates(db) == other.templates(other_db)
            && self.choices(db) == other.choices(other_db)
    }

    /// The copy as the character file writes it.
    pub fn to_entry(self, db: &dyn salsa::Database) -> CopyEntry {
        CopyEntry {
            id: self.id(db).clone(),
            item: self.item(db).as_str().into(),
            equipped: self.equipped(db).then_some(true),
            quantity: (self.quantity(db) != 1).then(|| self.quantity(db)),
            state: (**self.state(db)).clone(),
            templates: self
                .templates(db)
                .iter()
                .map(|t| t.as_str().into())
                .collect(),
            choices: (**self.choices(db)).clone(),
        }
    }
}

/// The saved value of one input field (`None`: not saved, the field reads its default).
#[salsa::input(debug)]
pub struct SavedValue {
    #[returns(ref)]
    pub value: Option<Literal>,
}

impl SavedValue {
    /// A saved value of a character being opened: [`STRUCTURE`] until its first edit.
    pub fn loaded(db: &dyn salsa::Database, value: Option<Literal>) -> SavedValue {
        SavedValue::builder(value).durability(STRUCTURE).new(db)
    }
}

/// A character. Its lists hold handles to the smaller inputs above; a list changes only when a copy
/// is added or removed, or a field is saved for the first time.
#[salsa::input(debug)]
pub struct CharacterInput {
    #[returns(copy)]
    pub ruleset: RulesetInput,
    #[returns(ref)]
    pub id: String,
    #[returns(copy)]
    pub creating: bool,
    /// Saved values by field ID (as written in the file: qualified, or bare and resolved in the
    /// pinned packs). Every input field the ruleset declares has a handle, saved or not, so a first
    /// save changes one [`SavedValue`] and not this map.
    #[returns(ref)]
    pub saved: Arc<FxHashMap<String, SavedValue>>,
    #[returns(ref)]
    pub features: Arc<Vec<CopyInput>>,
    #[returns(ref)]
    pub inventory: Arc<Vec<CopyInput>>,
    #[returns(ref)]
    pub applied: Arc<Vec<AppliedEntry>>,
    /// Picks of rules-level choices.
    #[returns(ref)]
    pub choices: Arc<Picks>,
    /// Picks among competing options: the file's `competing`, then the call's.
    #[returns(ref)]
    pub competing: Arc<Vec<String>>,
    /// The file's saved links: slot ID to the linked character's ID.
    #[returns(ref)]
    pub saved_links: Arc<FxHashMap<String, String>>,
    /// The views passed for link slots: slot ID to `{ id, values }`.
    #[returns(ref)]
    pub passed_links: Arc<FxHashMap<String, serde_json::Value>>,
    /// Errors found while reading the file as the engines see it (`duplicate-id`).
    #[returns(ref)]
    pub errors: Arc<Vec<serde_json::Value>>,
    /// The stored (ephemeral) follow-up offers, in file order.
    #[returns(ref)]
    pub follow_ups: Arc<Vec<ocf_model::StoredOffer>>,
    /// The templates content keeps on copies, `(copy instance ID, template)`, as
    /// [`crate::standard::StandardView::kept`].
    #[returns(ref)]
    pub kept: Arc<Vec<(String, String)>>,
    /// For a derived character ([`CharacterInput::derive`]), the character it was derived
    /// from, whose values it shares where they are the same ([`crate::derived`]).
    #[returns(copy)]
    pub derived_from: Option<CharacterInput>,
}

impl CharacterInput {
    /// The character's file as its inputs hold it (its standard copies as saved, its saved links),
    /// in `ruleset`'s spec version: for a character whose file no one holds.
    pub fn to_file(self, db: &dyn salsa::Database, ruleset: &Ruleset) -> Character {
        let mut saved: Vec<(&String, _)> = self.saved(db).iter().collect();
        saved.sort_by(|a, b| a.0.cmp(b.0));
        let mut values = ocf_model::Keyed::default();
        for (field, handle) in saved {
            if let Some(v) = handle.value(db) {
                values.0.insert(field.clone(), v.clone());
            }
        }
        let mut links: Vec<(&String, &String)> = self.saved_links(db).iter().collect();
        links.sort();
        let spec = ruleset
            .packs
            .first()
            .map(|p| p.spec_version.clone())
            .unwrap_or_else(|| "1.0.0".into());
        Character {
            id: self.id(db).clone(),
            spec_version: spec,
            packs: Vec::new(),
            creating: self.creating(db).then_some(true),
            values,
            features: self.features(db).iter().map(|c| c.to_entry(db)).collect(),
            inventory: self.inventory(db).iter().map(|c| c.to_entry(db)).collect(),
            applied: (**self.applied(db)).clone(),
            choices: (**self.choices(db)).clone(),
            competing: (**self.competing(db)).clone(),
            links: ocf_model::Keyed(
                links
                    .into_iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
            ),
            follow_ups: (**self.follow_ups(db)).clone(),
            homebrew: None,
            extensions: Default::default(),
        }
    }

    /// [`CharacterInput::derive`]'s inputs, of `character` as the engines see it (checked, its
    /// standard copies added: [`crate::load`]) with `errors` and the templates content `kept`.
    pub(crate) fn derive_checked(
        self,
        db: &crate::Database,
        character: &Character,
        errors: Vec<serde_json::Value>,
        kept: Vec<(String, String)>,
    ) -> CharacterInput {
        let ruleset = self.ruleset(db);
        let mut reuse = Reuse::of(db, self);
        let fields = Fields::of(
            ruleset.ruleset(db),
            character,
            &[],
            errors,
            kept,
            |new| match new {
                New::Saved(id, value) => Made::Saved(reuse.saved(id, &value)),
                New::Copy(list, entry) => Made::Copy(reuse.copy(
                    &entry.id,
                    |copy| copy.holds(db, ruleset, list, entry),
                    || CopyInput::from_entry(db, ruleset, list, entry),
                )),
            },
        );
        reuse.note(&fields.features, &fields.inventory);
        fields.input(db, ruleset, self.passed_links(db).clone(), Some(self))
    }

    /// [`CharacterInput::derive`] of the character `other` holds in `other_db` (a session's, in
    /// another database): its inputs are the file as the engines see it already (checked, its
    /// standard copies found), so they are read as they are, and `self`'s that hold the same
    /// serve the derived character too.
    pub fn derive_from(
        self,
        db: &crate::Database,
        other_db: &dyn salsa::Database,
        other: CharacterInput,
    ) -> CharacterInput {
        let ruleset = self.ruleset(db);
        let mut reuse = Reuse::of(db, self);
        let saved: FxHashMap<String, SavedValue> = other
            .saved(other_db)
            .iter()
            .map(|(id, handle)| (id.clone(), reuse.saved(id, handle.value(other_db))))
            .collect();
        let mut copies = |list: &Arc<Vec<CopyInput>>| {
            let copies = list.iter().map(|theirs| {
                reuse.copy(
                    theirs.id(other_db),
                    |copy| copy.same_as(db, *theirs, other_db),
                    || {
                        CopyInput::builder(
                            ruleset,
                            theirs.list(other_db),
                            theirs.id(other_db).clone(),
                            theirs.item(other_db).clone(),
                            theirs.equipped(other_db),
                            theirs.quantity(other_db),
                            theirs.state(other_db).clone(),
                            theirs.templates(other_db).clone(),
                            theirs.choices(other_db).clone(),
                        )
                        .durability(STRUCTURE)
                        .new(db)
                    },
                )
            });
            Arc::new(copies.collect::<Vec<_>>())
        };
        let features = copies(other.features(other_db));
        let inventory = copies(other.inventory(other_db));
        reuse.note(&features, &inventory);
        CharacterInput::builder(
            ruleset,
            other.id(other_db).clone(),
            other.creating(other_db),
            Arc::new(saved),
            features,
            inventory,
            other.applied(other_db).clone(),
            other.choices(other_db).clone(),
            other.competing(other_db).clone(),
            other.saved_links(other_db).clone(),
            self.passed_links(db).clone(),
            other.errors(other_db).clone(),
            other.follow_ups(other_db).clone(),
            other.kept(other_db).clone(),
            Some(self),
        )
        .durability(STRUCTURE)
        .new(db)
    }

    /// `self` with one picks tree replaced: copy `entry`'s (the character's own for `None`) is
    /// `picks`. Derived from `self` in its database, so what the pick leaves as it was is
    /// shared ([`crate::derived`]): the trial of one pick that computeSheet's
    /// `no-eligible-option` asks for ([`crate::option_trials`]). Its inputs stay in `db` as
    /// long as `db` lives ([`crate::Database::derived`]). `None` when no copy is `entry`.
    pub(crate) fn with_picks(
        self,
        db: &crate::Database,
        entry: Option<&str>,
        picks: Arc<Picks>,
    ) -> Option<CharacterInput> {
        let ruleset = self.ruleset(db);
        let mut found = entry.is_none();
        let mut swap = |list: &Arc<Vec<CopyInput>>| -> Arc<Vec<CopyInput>> {
            let Some(entry) = entry else {
                return list.clone();
            };
            if !list.iter().any(|c| c.id(db) == entry) {
                return list.clone();
            }
            found = true;
            let copies = list.iter().map(|c| {
                if c.id(db) != entry {
                    return *c;
                }
                CopyInput::builder(
                    ruleset,
                    c.list(db),
                    c.id(db).clone(),
                    c.item(db).clone(),
                    c.equipped(db),
                    c.quantity(db),
                    c.state(db).clone(),
                    c.templates(db).clone(),
                    picks.clone(),
                )
                .durability(STRUCTURE)
                .new(db)
            });
            Arc::new(copies.collect())
        };
        let features = swap(self.features(db));
        let inventory = swap(self.inventory(db));
        if !found {
            return None;
        }
        let choices = match entry {
            None => picks.clone(),
            Some(_) => self.choices(db).clone(),
        };
        db.note_derived(2);
        let trial = CharacterInput::builder(
            ruleset,
            self.id(db).clone(),
            self.creating(db),
            self.saved(db).clone(),
            features,
            inventory,
            self.applied(db).clone(),
            choices,
            self.competing(db).clone(),
            self.saved_links(db).clone(),
            self.passed_links(db).clone(),
            self.errors(db).clone(),
            self.follow_ups(db).clone(),
            self.kept(db).clone(),
            Some(self),
        )
        .durability(STRUCTURE)
        .new(db);
        Some(trial)
    }

    /// Splits `character` into inputs of `db` as it is, its standard copies already added.
    pub(crate) fn load_as_is(
        db: &dyn salsa::Database,
        ruleset: RulesetInput,
        character: &Character,
        competing: &[String],
        errors: Vec<serde_json::Value>,
        kept: Vec<(String, String)>,
    ) -> CharacterInput {
        CharacterInput::load_linked(
            db,
            ruleset,
            character,
            competing,
            errors,
            kept,
            Arc::new(FxHashMap::default()),
        )
    }

    fn load_linked(
        db: &dyn salsa::Database,
        ruleset: RulesetInput,
        character: &Character,
        competing: &[String],
        errors: Vec<serde_json::Value>,
        kept: Vec<(String, String)>,
        links: Arc<FxHashMap<String, serde_json::Value>>,
    ) -> CharacterInput {
        let fields = Fields::of(
            ruleset.ruleset(db),
            character,
            competing,
            errors,
            kept,
            |new| match new {
                New::Saved(_, value) => Made::Saved(SavedValue::loaded(db, value)),
                New::Copy(list, entry) => {
                    Made::Copy(CopyInput::from_entry(db, ruleset, list, entry))
                }
            },
        );
        fields.input(db, ruleset, links, None)
    }

    /// Sets the saved value of `field` (qualified): one [`SavedValue`] changes.
    pub fn save_value(self, db: &mut dyn salsa::Database, field: &str, value: Option<Literal>) {
        let existing = self.saved(db).get(field).copied();
        match existing {
            Some(handle) => {
                handle.set_value(db).with_durability(EDITED).to(value);
            }
            None => {
                let handle = SavedValue::builder(value).durability(EDITED).new(db);
                let mut saved = (**self.saved(db)).clone();
                saved.insert(field.to_owned(), handle);
                self.set_saved(db).to(Arc::new(saved));
            }
        }
    }
}

/// The given character's inputs a derived one takes as they are, where it holds the same (a
/// saved value, a copy): what reads only them (an activation's instances, a copy's item) is
/// shared with the given sheet, and a proposed sheet after one change makes few inputs.
struct Reuse<'db> {
    db: &'db crate::Database,
    saved: &'db FxHashMap<String, SavedValue>,
    copies: FxHashMap<&'db str, CopyInput>,
    /// The inputs made, the character's own among them.
    made: usize,
}

impl<'db> Reuse<'db> {
    fn of(db: &'db crate::Database, given: CharacterInput) -> Reuse<'db> {
        let copies = given
            .features(db)
            .iter()
            .chain(given.inventory(db).iter())
            .map(|c| (c.id(db).as_str(), *c))
            .collect();
        Reuse {
            db,
            saved: given.saved(db),
            copies,
            made: 1,
        }
    }

    /// The saved value of field `id`: the given character's handle when it holds `value`.
    fn saved(&mut self, id: &str, value: &Option<Literal>) -> SavedValue {
        match self.saved.get(id) {
            Some(handle) if handle.value(self.db) == value => *handle,
            _ => {
                self.made += 1;
                SavedValue::loaded(self.db, value.clone())
            }
        }
    }

    /// Copy `id`: the given character's when `same` says it holds the same, else `make`'s.
    fn copy(
        &mut self,
        id: &str,
        same: impl FnOnce(CopyInput) -> bool,
        make: impl FnOnce() -> CopyInput,
    ) -> CopyInput {
        match self.copies.get(id) {
            Some(&copy) if same(copy) => copy,
            _ => {
                self.made += 1;
                make()
            }
        }
    }

    /// Counts what the derived character holds toward [`crate::Database::derived`], in inputs of
    /// the character's own: the inputs it made, and its activations and effect index, which it
    /// holds whatever it shares. Those grow with its copies, about a sixteenth of an own input's
    /// worth a copy (a field value's memo, key and saved value): on the generated 2 000-field
    /// character, whose own 201 inputs hold about 4.2 MB, a proposed sheet after one change holds
    /// about 108 KB, five inputs' worth (docs/perf.md).
    fn note(&self, features: &[CopyInput], inventory: &[CopyInput]) {
        self.db
            .note_derived(self.made + (features.len() + inventory.len()).div_ceil(16));
    }
}

/// The character's file as its inputs hold it ([`CharacterInput::to_file`]), made once while
/// they stay as they are: a caller that compares the character with a file it holds (an action's
/// proposed sheets, with the file their session was opened on) reads it again for nothing.
pub(crate) fn held_file_query(
    db: &dyn salsa::Database,
    character: CharacterInput,
) -> Arc<Character> {
    let ruleset = character.ruleset(db).ruleset(db);
    Arc::new(character.to_file(db, ruleset))
}

/// An input [`Fields::of`] asks for.
enum New<'a> {
    /// The saved value of a field (its qualified ID).
    Saved(&'a str, Option<Literal>),
    Copy(CopyList, &'a CopyEntry),
}

/// The input made for a [`New`].
enum Made {
    Saved(SavedValue),
    Copy(CopyInput),
}

/// A character's fields as [`CharacterInput`] holds them (but its passed links), made with
/// `saved` and `copy` for the smaller inputs.
struct Fields {
    id: String,
    creating: bool,
    saved: Arc<FxHashMap<String, SavedValue>>,
    features: Arc<Vec<CopyInput>>,
    inventory: Arc<Vec<CopyInput>>,
    applied: Arc<Vec<AppliedEntry>>,
    choices: Arc<Picks>,
    competing: Arc<Vec<String>>,
    saved_links: Arc<FxHashMap<String, String>>,
    errors: Arc<Vec<serde_json::Value>>,
    follow_ups: Arc<Vec<ocf_model::StoredOffer>>,
    kept: Arc<Vec<(String, String)>>,
}

impl Fields {
    /// The character input holding these fields, with `links` passed for its link slots.
    fn input(
        self,
        db: &dyn salsa::Database,
        ruleset: RulesetInput,
        links: Arc<FxHashMap<String, serde_json::Value>>,
        derived_from: Option<CharacterInput>,
    ) -> CharacterInput {
        CharacterInput::builder(
            ruleset,
            self.id,
            self.creating,
            self.saved,
            self.features,
            self.inventory,
            self.applied,
            self.choices,
            self.competing,
            self.saved_links,
            links,
            self.errors,
            self.follow_ups,
            self.kept,
            derived_from,
        )
        .durability(STRUCTURE)
        .new(db)
    }

    fn of(
        rules: &Ruleset,
        character: &Character,
        competing: &[String],
        errors: Vec<serde_json::Value>,
        kept: Vec<(String, String)>,
        mut make: impl FnMut(New<'_>) -> Made,
    ) -> Fields {
        let mut saved = FxHashMap::default();
        for (id, decl) in rules.fields.iter() {
            if decl.decl.input == Some(true) {
                saved.insert(id.to_owned(), None);
            }
        }
        for (id, value) in character.values.iter() {
            let key = qualify_saved(rules, character, id);
            saved.insert(key, Some(value.clone()));
        }
        let saved = saved
            .into_iter()
            .map(|(id, value)| match make(New::Saved(&id, value)) {
                Made::Saved(handle) => (id, handle),
                Made::Copy(_) => unreachable!("a saved value makes a saved value"),
            })
            .collect();
        let mut copies = |list, entries: &[CopyEntry]| {
            let copies = entries.iter().map(|e| match make(New::Copy(list, e)) {
                Made::Copy(copy) => copy,
                Made::Saved(_) => unreachable!("a copy makes a copy"),
            });
            Arc::new(copies.collect::<Vec<_>>())
        };
        let features = copies(CopyList::Features, &character.features);
        let inventory = copies(CopyList::Inventory, &character.inventory);
        let mut picks = character.competing.clone();
        picks.extend(competing.iter().cloned());
        Fields {
            id: character.id.clone(),
            creating: character.creating.unwrap_or(false),
            saved: Arc::new(saved),
            features,
            inventory,
            applied: Arc::new(character.applied.clone()),
            choices: Arc::new(character.choices.clone()),
            competing: Arc::new(picks),
            saved_links: Arc::new(
                character
                    .links
                    .iter()
                    .map(|(k, v)| (k.to_owned(), v.clone()))
                    .collect(),
            ),
            errors: Arc::new(errors),
            follow_ups: Arc::new(character.follow_ups.clone()),
            kept: Arc::new(kept),
        }
    }
}

/// The inputs of a character's removed copies, for the next copies added to reuse: salsa can't
/// delete an input, so a character that keeps adding and removing copies would otherwise hold
/// every copy input it ever made (decisions.md, "Session memory"). A closed character needs no
/// slots: its database goes with it.
#[derive(Debug, Default)]
pub(crate) struct Slots {
    copies: Vec<CopyInput>,
}

impl Slots {
    /// How many slots are free, for [`crate::Session::stored`]'s callers to tell apart.
    pub(crate) fn free(&self) -> usize {
        self.copies.len()
    }

    /// A copy of `entry`: a removed copy's input refilled, or a new one.
    pub(crate) fn copy(
        &mut self,
        db: &mut dyn salsa::Database,
        ruleset: RulesetInput,
        list: CopyList,
        entry: &CopyEntry,
    ) -> CopyInput {
        match self.copies.pop() {
            Some(copy) => {
                copy.refill(db, ruleset, list, entry);
                copy
            }
            None => CopyInput::from_entry(&*db, ruleset, list, entry),
        }
    }

    /// A copy removed from its character: its input waits for the next copy added.
    pub(crate) fn free_copy(&mut self, copy: CopyInput) {
        self.copies.push(copy);
    }
}

/// A saved value's key: a qualified field ID as is; a bare one resolved in the pinned packs, in pin
/// order, then in every loaded pack (decisions.md, "Saved values by bare ID").
pub(crate) fn qualify_saved(ruleset: &Ruleset, character: &Character, id: &str) -> String {
    if id.contains(':') {
        return id.to_owned();
    }
    let pins = character.packs.iter().map(|p| p.id.as_str());
    let loaded = ruleset.packs.iter().map(|p| p.id.as_str());
    pins.chain(loaded)
        .map(|pack| format!("{pack}:{id}"))
        .find(|q| ruleset.fields.get(q).is_some())
        .unwrap_or_else(|| id.to_owned())
}
