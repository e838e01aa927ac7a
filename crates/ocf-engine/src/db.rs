//! The map of the engine's queries, and the database that holds them.
//!
//! Every salsa query of computeSheet, listOptions and applyChanges is declared here, in the order
//! of engine-core.md (EC) and effects.md (EF), one line each on what it computes and what it
//! reads; its body is a plain function next to the types it computes (`<name>_query` in the
//! module named after the query's section, as rust-analyzer's `hir-def` names the
//! implementations of the queries its `db.rs` declares). The recursion of the domain is wired
//! here and nowhere else: an activation's condition reads fields ([`field_value`]), a field
//! reads its effects ([`field_effects`]), effects read activations ([`activations`]). Every
//! module that implements a step calls the queries of the other steps through this map, never
//! through each other, so the module graph outside it has no cycle (`cargo test -p ocf-modules`).
//! Below the steps stand the base helpers and the shared modules every step reads the character
//! through; above them, the calls; `ocf-modules`' `ENGINE_FLOORS` names each module's floor and
//! the same test checks that a step imports only the map and the floors below (decisions.md,
//! "The engine's floors").
//!
//! Why tracked functions declared here rather than a `Db` trait per layer (ruff's `ty`) or
//! rust-analyzer's query groups: salsa 0.28 has no query groups (a query is a `#[salsa::tracked]`
//! function, its memo keyed by the function), and a `Db` trait earns its keep between crates,
//! each extending the one below; inside one crate, a trait would only add a `dyn` call in front of
//! every query. Declaring the tracked functions themselves here gives the one visible place of
//! the recursion at no cost: each query keeps its name (`field_value`, as the execution log and
//! the incremental tests name it), its memo and its cycle recovery, and its body is inlined into
//! it. Queries' keys and values are re-exported here so that a step names what it reads from the
//! map, not from the step that computes it.
//!
//! The database itself: salsa storage, plus an optional log of the queries that really ran (and
//! of the memos salsa checked and kept), for the incremental tests and `ocf watch`'s "N field
//! values recomputed".

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use salsa::{DatabaseKeyIndex, Event, EventKind};

use ocf_formula::Value;
use ocf_model::Character;

pub use crate::activation::{Activation, Activations, ChoicePick, ChoiceRecord, Via};
pub use crate::computed::Computed;
pub use crate::effects::{
    ActivationKey, EffectIndex, FieldInstances, FieldsWhere, Instance, MaskKey, Placed, Source,
    SourceKind,
};
pub use crate::field::{FieldKey, FieldValue};
pub use crate::input::{CharacterInput, CopyInput, RulesetInput, SavedValue};
pub use crate::links::Links;
pub use crate::offers::Offers;
pub(crate) use crate::sheet::{Chunk, FieldTable, FieldTree, Group, Judged, PartKey, Rest};
pub use crate::view::ItemKey;
pub(crate) use crate::view::PendingFields;

// listOptions (remaining-calls.md A.1) and applyChanges (A.2) declare no queries of their own:
// a listOptions trial is a derived character ([`crate::input::CharacterInput::derive`]) read
// through the queries above, [`shares_with_given`] and [`same_as_given`] sharing what it can
// with the given one; applyChanges reads [`field_value`] and [`effect_instances`].

// --- The character as engines see it (EC) ---

/// The character's file as its inputs hold it; reads every input of the character.
#[salsa::tracked(returns(ref), no_eq)]
pub fn held_file(db: &dyn salsa::Database, character: CharacterInput) -> Arc<Character> {
    crate::input::held_file_query(db, character)
}

/// `character` (EC "`character`"): reads the character's lists, copies and applied entries.
#[salsa::tracked(returns(ref))]
pub fn character_view(db: &dyn salsa::Database, character: CharacterInput) -> Value {
    crate::view::character_view_query(db, character)
}

/// An item's literal members and its formula fields; reads the ruleset's content.
#[salsa::tracked(returns(ref))]
pub(crate) fn item_parts<'db>(
    db: &'db dyn salsa::Database,
    key: ItemKey<'db>,
) -> Option<(Vec<(String, Value)>, PendingFields)> {
    crate::view::item_parts_query(db, key)
}

/// `item` (EC "Items and `item`") with its templates merged; reads [`item_parts`].
#[salsa::tracked(returns(ref))]
pub fn item_view<'db>(db: &'db dyn salsa::Database, key: ItemKey<'db>) -> Option<Value> {
    crate::view::item_view_query(db, key)
}

/// `item` as the sheet's formulas see it, formula fields evaluated; reads [`item_parts`], [`character_view`].
#[salsa::tracked(returns(ref))]
pub fn item_in_character<'db>(
    db: &'db dyn salsa::Database,
    character: CharacterInput,
    key: ItemKey<'db>,
) -> Option<Value> {
    crate::view::item_in_character_query(db, character, key)
}

/// A copy as `self` (EC "Copies and `self`"); reads the copy's input and its item's state declarations.
#[salsa::tracked(returns(ref))]
pub fn copy_self(db: &dyn salsa::Database, character: CharacterInput, copy: CopyInput) -> Value {
    crate::view::copy_self_query(db, character, copy)
}

/// The filled link slots' views and their errors (EC "Links"); reads the character's links and the ruleset.
#[salsa::tracked(returns(ref))]
pub fn links(db: &dyn salsa::Database, character: CharacterInput) -> Links {
    crate::links::links_query(db, character)
}

// --- Activation (EC "Activation") ---

/// What is active: rules-level picks, copies, grants, picks, applied entries, immunity rounds; reads [`copies_walk`], conditions' [`field_value`]s, [`copy_self`], [`item_view`].
#[salsa::tracked(returns(ref))]
pub fn activations(db: &dyn salsa::Database, character: CharacterInput) -> Activations {
    crate::activation::activations_query(db, character)
}

/// The activations of copies `part * 8 ..`, walked on their own; reads what [`activations`] reads for those copies.
#[salsa::tracked(returns(ref))]
pub(crate) fn copies_walk(
    db: &dyn salsa::Database,
    character: CharacterInput,
    part: usize,
) -> Activations {
    crate::activation::copies_walk_query(db, character, part)
}

// --- computeSheet: effects (EC "Effects", EF "Targets") ---

/// The rules' own effect instances (EC "Instance order" 1); reads the ruleset only.
#[salsa::tracked(returns(ref))]
pub(crate) fn rules_instances(
    db: &dyn salsa::Database,
    ruleset_input: RulesetInput,
) -> Arc<[Arc<Instance>]> {
    crate::effects::rules_instances_query(db, ruleset_input)
}

/// One activation's effect instances whose scope matches it; reads the activation's content and [`matching_fields`].
#[salsa::tracked(returns(ref))]
pub(crate) fn activation_instances<'db>(
    db: &'db dyn salsa::Database,
    key: ActivationKey<'db>,
) -> Arc<[Arc<Instance>]> {
    crate::effects::activation_instances_query(db, key)
}

/// Every effect instance in instance order, indexed by field; reads [`activations`], [`rules_instances`], [`activation_instances`].
#[salsa::tracked(returns(ref))]
pub fn effect_instances(db: &dyn salsa::Database, character: CharacterInput) -> EffectIndex {
    crate::effects::effect_instances_query(db, character)
}

/// The fields a set-of-fields target reaches (EF "Targets"); reads the ruleset only.
#[salsa::tracked(returns(ref))]
pub fn matching_fields<'db>(db: &'db dyn salsa::Database, key: FieldsWhere<'db>) -> Vec<String> {
    crate::effects::matching_fields_query(db, key)
}

/// Which of 8 targetable fields have instances, a firewall before [`field_effects`]; reads [`effect_instances`].
#[salsa::tracked]
pub fn fields_with_instances<'db>(db: &'db dyn salsa::Database, key: MaskKey<'db>) -> u8 {
    crate::effects::fields_with_instances_query(db, key)
}

/// The instances on one field, a firewall between the index and the value; reads [`effect_instances`].
#[salsa::tracked(returns(ref))]
pub fn field_effects<'db>(db: &'db dyn salsa::Database, key: FieldKey<'db>) -> FieldInstances {
    crate::effects::field_effects_query(db, key)
}

// --- computeSheet: field values (EC "Field values", EF "Fixed order") ---

/// A field's value with its breakdown; reads its formula's fields ([`field_value`]), [`saved_handle`], [`fields_with_instances`] / [`field_effects`], on a derived character [`same_as_given`]. A loop is `circular-formula`.
#[salsa::tracked(returns(ref), cycle_result = field_cycle)]
pub fn field_value<'db>(db: &'db dyn salsa::Database, key: FieldKey<'db>) -> Arc<FieldValue> {
    crate::field::field_value_query(db, key)
}

/// A field's saved value's handle, a firewall over the character's map of handles.
#[salsa::tracked]
pub fn saved_handle<'db>(db: &'db dyn salsa::Database, key: FieldKey<'db>) -> Option<SavedValue> {
    crate::field::saved_handle_query(db, key)
}

/// Whether a derived character (a listOptions trial, a proposed sheet) reads, outside its fields, what its given character reads.
#[salsa::tracked(returns(copy))]
pub(crate) fn shares_with_given(db: &dyn salsa::Database, character: CharacterInput) -> bool {
    crate::derived::shares_with_given_query(db, character)
}

/// Whether a field has the same value on a derived character as on the given one; reads [`shares_with_given`], [`field_effects`], [`activations`], the given's [`field_value`].
#[salsa::tracked(returns(copy), cycle_result = not_same)]
pub(crate) fn same_as_given<'db>(db: &'db dyn salsa::Database, key: FieldKey<'db>) -> bool {
    crate::derived::same_as_given_query(db, key)
}

// --- computeSheet: pending choices, offers and issues (EC "Pending choices and issues") ---

/// The character's offers, derived over the activations then stored; reads [`activations`].
#[salsa::tracked(returns(ref))]
pub fn offers(db: &dyn salsa::Database, character: CharacterInput) -> Offers {
    crate::offers::offers_query(db, character)
}

/// Issues, the choice list and pending choices; reads [`activations`] and the fields prerequisites and constraints name.
#[salsa::tracked(returns(ref))]
pub(crate) fn sheet_judged(db: &dyn salsa::Database, character: CharacterInput) -> Arc<Judged> {
    crate::sheet::sheet_judged_query(db, character)
}

// --- computeSheet: computed values (EC "Computed values") ---

/// A copy's computed values in declaration order; reads [`copy_self`], [`item_in_character`], every [`field_value`] its formulas name.
#[salsa::tracked(returns(ref))]
pub fn computed_values(
    db: &dyn salsa::Database,
    character: CharacterInput,
    copy: CopyInput,
) -> Computed {
    crate::computed::computed_values_query(db, character, copy)
}

// --- computeSheet: the output, in firewalls (engine-interface.md) ---

/// The key of each declared field and of each mask, interned once per character; reads the ruleset.
#[salsa::tracked(returns(ref))]
pub(crate) fn field_keys<'db>(
    db: &'db dyn salsa::Database,
    character: CharacterInput,
) -> FieldTable<'db> {
    crate::sheet::field_keys_query(db, character)
}

/// The values of a chunk of fields; reads their [`field_value`]s.
#[salsa::tracked(returns(ref), no_eq)]
pub(crate) fn sheet_chunk<'db>(db: &'db dyn salsa::Database, part: PartKey<'db>) -> Chunk {
    crate::sheet::sheet_chunk_query(db, part)
}

/// A group of chunks; reads [`sheet_chunk`].
#[salsa::tracked(returns(ref), no_eq)]
pub(crate) fn sheet_group<'db>(db: &'db dyn salsa::Database, part: PartKey<'db>) -> Group {
    crate::sheet::sheet_group_query(db, part)
}

/// A section of groups; reads [`sheet_group`].
#[salsa::tracked(returns(ref), no_eq)]
pub(crate) fn sheet_section<'db>(db: &'db dyn salsa::Database, part: PartKey<'db>) -> Arc<[Group]> {
    crate::sheet::sheet_section_query(db, part)
}

/// The sheet's fields as sections; reads [`sheet_section`].
#[salsa::tracked(returns(ref), no_eq)]
pub(crate) fn field_tree(db: &dyn salsa::Database, character: CharacterInput) -> FieldTree {
    crate::sheet::field_tree_query(db, character)
}

/// Every field's value in field order; reads [`field_tree`].
#[salsa::tracked(returns(ref), no_eq)]
pub(crate) fn sheet_fields(
    db: &dyn salsa::Database,
    character: CharacterInput,
) -> Arc<[(Arc<str>, Arc<FieldValue>)]> {
    crate::sheet::sheet_fields_query(db, character)
}

/// The effect instances as the sheet lists them; reads [`effect_instances`].
#[salsa::tracked(returns(ref), no_eq)]
pub(crate) fn shared_effects(db: &dyn salsa::Database, character: CharacterInput) -> Arc<[Placed]> {
    crate::sheet::shared_effects_query(db, character)
}

/// The activations as the sheet lists them; reads [`activations`].
#[salsa::tracked(returns(ref), no_eq)]
pub(crate) fn shared_activations(
    db: &dyn salsa::Database,
    character: CharacterInput,
) -> Arc<Activations> {
    crate::sheet::shared_activations_query(db, character)
}

/// The available actions (EC, computeSheet "Actions"); reads [`activations`], the actions'
/// `available` formulas, [`used_rules_actions`].
#[salsa::tracked(returns(ref))]
pub fn listed_actions(
    db: &dyn salsa::Database,
    character: CharacterInput,
) -> Vec<crate::actions::Listed> {
    crate::actions::listed_actions_query(db, character)
}

/// The rules actions content `use`s; reads the ruleset only.
#[salsa::tracked(returns(ref))]
pub(crate) fn used_rules_actions(
    db: &dyn salsa::Database,
    ruleset_input: RulesetInput,
) -> std::collections::BTreeSet<String> {
    crate::actions::used_rules_actions_query(ruleset_input.ruleset(db))
}

/// Copies' computed values and names, errors, actions and offers; reads [`computed_values`], [`links`], [`offers`].
#[salsa::tracked(returns(ref))]
pub(crate) fn sheet_rest(db: &dyn salsa::Database, character: CharacterInput) -> Arc<Rest> {
    crate::sheet::sheet_rest_query(db, character)
}

/// [`field_value`]'s value on a loop: `circular-formula` (EF "Loops").
fn field_cycle<'db>(
    db: &'db dyn salsa::Database,
    id: salsa::Id,
    key: FieldKey<'db>,
) -> Arc<FieldValue> {
    crate::field::field_cycle(db, id, key)
}

/// [`same_as_given`] on a loop: not the same, so the field is computed on its own character.
fn not_same<'db>(db: &'db dyn salsa::Database, id: salsa::Id, key: FieldKey<'db>) -> bool {
    crate::derived::not_same(db, id, key)
}

/// The sheet database. Cheap to clone (a clone shares the storage); a setter waits for every
/// clone to drop, so keep clones short-lived.
#[salsa::db]
#[derive(Clone)]
pub struct Database {
    storage: salsa::Storage<Self>,
    executed: Option<Arc<Mutex<Log>>>,
    /// How many inputs derived characters made here ([`Database::derived`]).
    derived: Arc<AtomicUsize>,
    /// What a caller keeps here between its calls ([`Database::keep`]).
    kept: Arc<Mutex<Option<Box<dyn std::any::Any + Send>>>>,
    /// Each character's judged part settled by trial sheets in one revision
    /// ([`crate::option_trials`]), so reading the sheet again makes no trial again.
    pub(crate) settled: Arc<Mutex<crate::option_trials::Settled>>,
}

/// What salsa reported since the log was last read.
#[derive(Default)]
struct Log {
    /// Queries that ran (`WillExecute`).
    executed: Vec<DatabaseKeyIndex>,
    /// Memos checked and kept without running (`DidValidateMemoizedValue`): a memo passed on its
    /// durability alone, through a check of its inputs, or after the memos it read were kept.
    validated: Vec<DatabaseKeyIndex>,
}

impl Default for Database {
    fn default() -> Self {
        Database {
            storage: salsa::Storage::new(None),
            executed: None,
            derived: Arc::default(),
            kept: Arc::default(),
            settled: Arc::default(),
        }
    }
}

#[salsa::db]
impl salsa::Database for Database {}

impl Database {
    /// A database that records every query execution (salsa's `WillExecute` events) and every
    /// memo kept (`DidValidateMemoizedValue`).
    pub fn with_execution_log() -> Database {
        let log = Arc::new(Mutex::new(Log::default()));
        let sink = log.clone();
        let callback = move |event: Event| {
            let mut log = sink.lock().unwrap_or_else(|e| e.into_inner());
            match event.kind {
                EventKind::WillExecute { database_key } => log.executed.push(database_key),
                EventKind::DidValidateMemoizedValue { database_key } => {
                    log.validated.push(database_key)
                }
                _ => {}
            }
        };
        Database {
            storage: salsa::Storage::new(Some(Box::new(callback))),
            executed: Some(log),
            derived: Arc::default(),
            kept: Arc::default(),
            settled: Arc::default(),
        }
    }

    /// How many inputs (saved values, copies, characters) the characters derived in this
    /// database have made ([`CharacterInput::derive`](crate::input::CharacterInput::derive): an
    /// action's proposed sheets). Salsa never frees an input, so a session rebuilds a database
    /// whose derived inputs outgrow its character ([`crate::Session::reclaim`]).
    pub fn derived(&self) -> usize {
        self.derived.load(Ordering::Relaxed)
    }

    /// Keeps `value` here for a later call on this database to [`Database::take_kept`], in
    /// place of what was kept before: what a call built from the database's character and would
    /// otherwise build again on the next call (ocf-actions keeps the session its proposed sheets
    /// are applied on). It goes with the database: a closed character's, or one a session
    /// reloads (a homebrew change); a reclaim passes it on ([`crate::Session::reclaim`]).
    pub fn keep<T: std::any::Any + Send>(&self, value: T) {
        *self.kept.lock().unwrap_or_else(|e| e.into_inner()) = Some(Box::new(value));
    }

    /// What [`Database::keep`] kept, if it is a `T`; taken, so two calls at once never share it.
    pub fn take_kept<T: std::any::Any + Send>(&self) -> Option<T> {
        let kept = self.kept.lock().unwrap_or_else(|e| e.into_inner()).take()?;
        kept.downcast::<T>().ok().map(|b| *b)
    }

    /// Moves what [`Database::keep`] kept here to `to` (a database rebuilt for the same
    /// character, [`crate::Session::reclaim`]).
    pub(crate) fn pass_kept(&self, to: &Database) {
        let kept = self.kept.lock().unwrap_or_else(|e| e.into_inner()).take();
        if kept.is_some() {
            *to.kept.lock().unwrap_or_else(|e| e.into_inner()) = kept;
        }
    }

    pub(crate) fn note_derived(&self, inputs: usize) {
        self.derived.fetch_add(inputs, Ordering::Relaxed);
    }

    /// The queries that ran since the last call, as `query_name(key)`, in execution order; field
    /// values name their field. Empty when the database keeps no log.
    pub fn take_executed(&self) -> Vec<String> {
        let Some(log) = &self.executed else {
            return Vec::new();
        };
        let keys = std::mem::take(&mut log.lock().unwrap_or_else(|e| e.into_inner()).executed);
        keys.into_iter().map(|key| self.describe(key)).collect()
    }

    /// The memos salsa checked and kept since the last call, as [`Database::take_executed`]
    /// names them. Empty when the database keeps no log.
    pub fn take_validated(&self) -> Vec<String> {
        let Some(log) = &self.executed else {
            return Vec::new();
        };
        let keys = std::mem::take(&mut log.lock().unwrap_or_else(|e| e.into_inner()).validated);
        keys.into_iter().map(|key| self.describe(key)).collect()
    }

    fn describe(&self, key: DatabaseKeyIndex) -> String {
        use salsa::Database as _;
        let name = self.ingredient_debug_name(key.ingredient_index());
        match crate::field::field_key_text(self, &name, key) {
            Some(field) => format!("{name}({field})"),
            None => name.into_owned(),
        }
    }
}
