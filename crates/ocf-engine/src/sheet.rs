//! computeSheet's output (docs/spec/engine-interface.md): `values`, `competing`, `effects`,
//! `activations`, `issues` and `errors`, assembled from the queries.

use std::sync::Arc;

use ocf_formula::Value;
use serde_json::{Map, Value as Json, json};

use crate::db::{
    Activation, CharacterInput, FieldKey, FieldValue, activations, effect_instances, field_keys,
    field_tree, field_value, shared_activations, shared_effects, sheet_chunk, sheet_fields,
    sheet_group, sheet_judged, sheet_rest, sheet_section,
};
use crate::issues::{activation_issues, rules_issues};
pub use crate::report::activation_source;
use crate::report::op_name;
use crate::report::{kind_rank, path_json};
pub(crate) use crate::sheet_parts::{Judged, Rest};

/// A computed sheet: every field's value (shared with the database's memos: taking a sheet after
/// an edit costs what the edit recomputed plus a few `Arc` clones), the effect instances, the
/// activations and the issues. [`Sheet::to_json`] is computeSheet's output.
#[derive(Debug, Clone)]
pub struct Sheet {
    /// Field ID and value, in ruleset field order.
    pub fields: Arc<[(Arc<str>, Arc<FieldValue>)]>,
    pub effects: Arc<[crate::db::Placed]>,
    pub activations: Arc<crate::db::Activations>,
    /// Issues, choices, actions, copies' computed values and sheet errors.
    rest: Arc<Rest>,
}

/// Collects the sheet of `character`, computing what isn't remembered. Every part is a memo shared
/// with the database, so a sheet costs a few `Arc` clones beyond what an edit recomputed.
pub fn collect(db: &dyn salsa::Database, character: CharacterInput) -> Sheet {
    Sheet {
        fields: sheet_fields(db, character).clone(),
        effects: shared_effects(db, character).clone(),
        activations: shared_activations(db, character).clone(),
        rest: crate::option_trials::settled_rest(db, character, sheet_rest(db, character)),
    }
}

/// What a listOptions trial compares with its base sheet ([`crate::options`]): the field values
/// and the judged part, not the copies, actions and offers, which a pick's listing doesn't show.
pub(crate) struct Trial {
    pub(crate) fields: Arc<[(Arc<str>, Arc<FieldValue>)]>,
    pub(crate) judged: Arc<Judged>,
}

impl Trial {
    /// The issues, as [`Sheet::issues_json`] lists them.
    pub(crate) fn issues_json(&self) -> Vec<Json> {
        issues_with_limits(&self.judged, &self.fields)
    }
}

impl From<&Sheet> for Trial {
    fn from(sheet: &Sheet) -> Trial {
        Trial {
            fields: sheet.fields.clone(),
            judged: sheet.rest.judged.clone(),
        }
    }
}

/// The trial of `character` whose field values are those of `base` but at the places `reread`
/// (ascending), which are read again: a listOptions trial, when the fields a pick can reach are known
/// ([`crate::options`]). `None` when `base` isn't a sheet of this character's fields.
pub(crate) fn with_fields(
    db: &dyn salsa::Database,
    character: CharacterInput,
    base: &[(Arc<str>, Arc<FieldValue>)],
    reread: &[usize],
) -> Option<Trial> {
    let keys = field_keys(db, character);
    if keys.len() != base.len() {
        return None;
    }
    debug_assert!(reread.windows(2).all(|w| w[0] < w[1]), "places ascending");
    let mut again: Vec<Arc<FieldValue>> = Vec::with_capacity(reread.len());
    for &i in reread {
        let (id, key) = keys.get(i)?;
        if base.get(i).is_none_or(|(theirs, _)| theirs != id) {
            return None;
        }
        again.push(field_value(db, *key).clone());
    }
    // Made in place, in one allocation: the base's fields, those read again replaced.
    let mut again = reread.iter().copied().zip(again).peekable();
    let fields = base
        .iter()
        .enumerate()
        .map(|(i, (id, value))| match again.next_if(|(at, _)| *at == i) {
            Some((_, value)) => (id.clone(), value),
            None => (id.clone(), value.clone()),
        })
        .collect();
    Some(Trial {
        fields,
        judged: crate::option_trials::settled_judged(db, character, sheet_judged(db, character)),
    })
}

/// The effect instances as the sheet shares them; `no_eq`: only [`collect`] reads it.
pub(crate) fn shared_effects_query(
    db: &dyn salsa::Database,
    character: CharacterInput,
) -> Arc<[crate::db::Placed]> {
    // An instance on a field with computed tags is listed only when it stands on the field's
    // tags on this sheet (EF, "Targets": "`effects` doesn't list one").
    let ruleset = character.ruleset(db).ruleset(db);
    effect_instances(db, character)
        .list
        .iter()
        .filter(|instance| {
            let Some(field) = &instance.field else {
                return true;
            };
            if !matches!(instance.effect.target, ocf_model::Target::Fields { .. }) {
                return true;
            }
            let key = crate::db::FieldKey::new(db, character, &**field);
            let tags = &crate::db::field_value(db, key).tags;
            crate::field::stands_on_tags(ruleset, instance, tags)
        })
        .cloned()
        .collect()
}

/// The activations as the sheet shares them; `no_eq`: only [`collect`] reads it.
pub(crate) fn shared_activations_query(
    db: &dyn salsa::Database,
    character: CharacterInput,
) -> Arc<crate::db::Activations> {
    Arc::new(activations(db, character).clone())
}

/// The key of each field the character's ruleset declares, in field order, with its ID, and the
/// key of each [`crate::db::fields_with_instances`] mask of the fields an effect can target
/// ([`crate::targets`]): made once per character (it reads only the ruleset), so a sheet read
/// interns no keys.
pub(crate) fn field_keys_query<'db>(
    db: &'db dyn salsa::Database,
    character: CharacterInput,
) -> FieldTable<'db> {
    let ruleset = character.ruleset(db).ruleset(db);
    let keys: Vec<_> = crate::formula::field_ids(ruleset)
        .iter()
        .map(|id| (id.clone(), FieldKey::new(db, character, id.clone())))
        .collect();
    let targets = crate::formula::targets(ruleset);
    let masks = (0..targets.count().div_ceil(crate::effects::FIELDS_PER_MASK))
        .map(|chunk| crate::db::MaskKey::new(db, character, chunk as u32))
        .collect();
    // As many as there are chunks, which is at least as many as groups and sections.
    let parts = (0..keys.len().div_ceil(CHUNK))
        .map(|index| PartKey::new(db, character, index as u32))
        .collect();
    FieldTable {
        keys,
        masks,
        parts,
        targets,
        ruleset: crate::input::SameRuleset(ruleset.clone()),
    }
}

/// A character's keys of its fields and of their masks ([`field_keys`]); as a list, the fields'.
#[derive(Debug, Clone, PartialEq, salsa::SalsaValue)]
pub(crate) struct FieldTable<'db> {
    keys: Vec<(Arc<str>, FieldKey<'db>)>,
    masks: Vec<crate::db::MaskKey<'db>>,
    /// The key of each part of the sheet's tree by its index ([`PartKey`]).
    parts: Vec<PartKey<'db>>,
    /// The fields an effect can target, which the masks cover.
    targets: Arc<crate::targets::Targets>,
    /// The ruleset the table was made of: another one (a homebrew reloaded) makes the table new,
    /// and every value that read it runs again.
    ruleset: crate::input::SameRuleset,
}

impl<'db> FieldTable<'db> {
    /// The character's ruleset.
    pub(crate) fn ruleset(&self) -> &ocf_model::Ruleset {
        &self.ruleset.0
    }

    /// The `place`th field's slot among the fields an effect can target, and its mask's key;
    /// `None` when no effect can target it.
    pub(crate) fn mask(&self, place: usize) -> Option<(usize, crate::db::MaskKey<'db>)> {
        let slot = self.targets.slot(place)?;
        let key = self.masks.get(slot / crate::effects::FIELDS_PER_MASK)?;
        Some((slot, *key))
    }
}

/// The key of the `index`th chunk, group or section of a character's sheet ([`sheet_chunk`],
/// [`sheet_group`], [`sheet_section`]): made with the character's table of keys, so that a read
/// of a part interns nothing (a tracked function of the character and an index interned the pair
/// on every call, 41 times an edit at 2 000 fields).
#[salsa::interned(debug, revisions = usize::MAX)]
pub(crate) struct PartKey<'db> {
    #[returns(copy)]
    pub(crate) character: CharacterInput,
    #[returns(copy)]
    pub(crate) index: u32,
}

impl<'db> FieldTable<'db> {
    /// The key of the `index`th part.
    fn part(&self, index: usize) -> PartKey<'db> {
        self.parts[index]
    }
}

impl<'db> std::ops::Deref for FieldTable<'db> {
    type Target = [(Arc<str>, FieldKey<'db>)];
    fn deref(&self) -> &Self::Target {
        &self.keys
    }
}

/// How many fields a [`sheet_chunk`] holds: small enough that an edit re-reads few fields beyond
/// the ones it changed, large enough that a [`sheet_group`] joins few chunks.
pub(crate) const CHUNK: usize = 16;

/// How many chunks a [`sheet_group`] holds.
///
/// With 16 × 8 × 16 fields a section, a sheet of 2 000 fields is one section of 16 groups and
/// one of 20 000 fields is 10 sections; an edit that changes one field re-runs one chunk, one
/// group of 8 chunks, one section of 16 groups and the tree's list of sections (with two levels
/// the tree's list was of 79 groups at 20 000 fields, which an edit made again: one sixth of an
/// edit's cost). Groups of 8 chunks rather than 16 ask an edit's group fewer chunks than a section
/// gains in groups: an edit and its changes 0.395 → 0.391 M instructions at 2 000 fields,
/// 0.400 → 0.397 M at 20 000 (docs/perf.md, "Issue 11, session 15").
pub(crate) const GROUP: usize = 8;

/// How many groups a [`sheet_section`] holds, and so how many sections [`field_tree`] holds.
pub(crate) const SECTION: usize = 16;

/// A run of [`CHUNK`] fields in the tree's order ([`crate::formula::field_layout`]): ID and value
/// (the `Arc` the memo of `field_value` holds).
pub(crate) type Chunk = Arc<[(Arc<str>, Arc<FieldValue>)]>;

/// [`GROUP`] chunks.
pub(crate) type Group = Arc<[Chunk]>;

/// Every field's value as a three-level tree, [`SECTION`] groups a section, [`GROUP`] chunks a
/// group: each level a memo whose `Arc` stays the same while nothing under it changed, so two
/// trees are compared by pointer down to the fields that changed ([`crate::changes`]).
pub(crate) type FieldTree = Arc<[Arc<[Group]>]>;

/// Every field's value, in field order: the tree flattened. `no_eq`: only [`collect`] reads it.
/// A sheet read re-runs it after any field changed, at a cost of one `Arc` clone a field; what an
/// edit changed is read from the tree instead ([`crate::Session::changes`]).
pub(crate) fn sheet_fields_query(
    db: &dyn salsa::Database,
    character: CharacterInput,
) -> Arc<[(Arc<str>, Arc<FieldValue>)]> {
    flatten(field_tree(db, character), &layout(db, character))
}

/// The fields of `tree`, laid out by `layout`, in field order.
pub(crate) fn flatten(tree: &FieldTree, layout: &[u32]) -> Arc<[(Arc<str>, Arc<FieldValue>)]> {
    in_field_order(tree, layout).into_iter().cloned().collect()
}

/// The fields of `tree`, laid out by `layout` (the field order place of each, in the tree's
/// order), in field order.
pub(crate) fn in_field_order<'t>(
    tree: &'t FieldTree,
    layout: &[u32],
) -> Vec<&'t (Arc<str>, Arc<FieldValue>)> {
    let mut placed = vec![None; layout.len()];
    let entries = tree
        .iter()
        .flat_map(|section| section.iter())
        .flat_map(|group| group.iter())
        .flat_map(|chunk| chunk.iter());
    for (entry, &at) in entries.zip(layout) {
        if let Some(slot) = placed.get_mut(at as usize) {
            *slot = Some(entry);
        }
    }
    placed.into_iter().flatten().collect()
}

/// The order the sheet's tree holds the character's fields in.
pub(crate) fn layout(db: &dyn salsa::Database, character: CharacterInput) -> Arc<[u32]> {
    crate::formula::field_layout(character.ruleset(db).ruleset(db))
}

/// The sections of the sheet's fields: a firewall between a group that changed and the sheet,
/// whose list re-runs with one `Arc` clone a section. `no_eq`: it re-runs only when a section
/// changed.
pub(crate) fn field_tree_query(db: &dyn salsa::Database, character: CharacterInput) -> FieldTree {
    let table = field_keys(db, character);
    let sections = table.len().div_ceil(CHUNK * GROUP * SECTION);
    (0..sections)
        .map(|index| sheet_section(db, table.part(index)).clone())
        .collect()
}

/// The groups `index * SECTION ..`. `no_eq`: it re-runs only when one of its groups changed.
pub(crate) fn sheet_section_query<'db>(
    db: &'db dyn salsa::Database,
    part: PartKey<'db>,
) -> Arc<[Group]> {
    let table = field_keys(db, part.character(db));
    let index = part.index(db) as usize;
    let groups = table.len().div_ceil(CHUNK * GROUP);
    (index * SECTION..((index + 1) * SECTION).min(groups))
        .map(|group| sheet_group(db, table.part(group)).clone())
        .collect()
}

/// The chunks `index * GROUP ..`. `no_eq`: it re-runs only when one of its chunks changed.
pub(crate) fn sheet_group_query<'db>(db: &'db dyn salsa::Database, part: PartKey<'db>) -> Group {
    let table = field_keys(db, part.character(db));
    let index = part.index(db) as usize;
    let chunks = table.len().div_ceil(CHUNK);
    (index * GROUP..((index + 1) * GROUP).min(chunks))
        .map(|chunk| sheet_chunk(db, table.part(chunk)).clone())
        .collect()
}

/// The values of fields `index * CHUNK ..` in the tree's order: a firewall between a field value
/// that changed and the whole sheet. `no_eq`: it re-runs only when one of its fields changed.
pub(crate) fn sheet_chunk_query<'db>(db: &'db dyn salsa::Database, part: PartKey<'db>) -> Chunk {
    let keys = field_keys(db, part.character(db));
    // The table's ruleset: a read of the table, not of two inputs.
    let layout = crate::formula::field_layout(keys.ruleset());
    // Sized once: a list grown from an iterator of unknown length was reallocated three times.
    let mut chunk = Vec::with_capacity(CHUNK);
    chunk.extend(
        layout
            .iter()
            .skip(part.index(db) as usize * CHUNK)
            .take(CHUNK)
            .filter_map(|&at| keys.get(at as usize))
            .map(|(id, key)| (id.clone(), field_value(db, *key).clone())),
    );
    chunk.into()
}

/// The sheet's parts as the memos share them, fields as their tree: what a session keeps of the
/// sheet it last reported, to tell what an edit changed by comparing pointers
/// ([`crate::changes`]). A few `Arc` clones.
#[derive(Debug, Clone)]
pub(crate) struct Parts {
    pub(crate) tree: FieldTree,
    /// The order `tree` holds the fields in ([`crate::formula::field_layout`]).
    pub(crate) layout: Arc<[u32]>,
    pub(crate) effects: Arc<[crate::db::Placed]>,
    pub(crate) activations: Arc<crate::db::Activations>,
    pub(crate) rest: Arc<Rest>,
}

/// The parts of `character`'s sheet, computing what isn't remembered.
pub(crate) fn parts(db: &dyn salsa::Database, character: CharacterInput) -> Parts {
    Parts {
        tree: field_tree(db, character).clone(),
        layout: layout(db, character),
        effects: shared_effects(db, character).clone(),
        activations: shared_activations(db, character).clone(),
        rest: crate::option_trials::settled_rest(db, character, sheet_rest(db, character)),
    }
}

impl Parts {
    /// The sheet of these parts: the fields flattened, one `Arc` clone a field.
    pub(crate) fn sheet(&self) -> Sheet {
        Sheet {
            fields: flatten(&self.tree, &self.layout),
            effects: self.effects.clone(),
            activations: self.activations.clone(),
            rest: self.rest.clone(),
        }
    }
}

pub(crate) fn sheet_judged_query(
    db: &dyn salsa::Database,
    character: CharacterInput,
) -> Arc<Judged> {
    let acts = activations(db, character);
    let mut issues = activation_issues(db, character, &acts.list);
    for blocked in &acts.blocked {
        let source = match (&blocked.rules_pack, blocked.activation) {
            (Some(_), _) | (None, None) => json!({ "type": "rules", "id": blocked.id }),
            (None, Some(a)) => activation_source(&acts.list[a]).to_json(),
        };
        let rank = blocked.activation.map_or(0, |a| a + 1);
        issues.push((
            rank,
            kind_rank("immune"),
            json!({
                "code": "immune",
                "id": blocked.id,
                "source": source,
                "data": { "entry": blocked.entry, "item": blocked.item },
            }),
        ));
    }
    let (choices, pending, choice_issues, unsettled) =
        crate::choices::choice_lists(db, character, acts);
    issues.extend(rules_issues(db, character, acts));
    issues.extend(choice_issues);
    // By activation (the rules first), then kind; written order is kept (the sort is stable).
    issues.sort_by_key(|(rank, kind, _)| (*rank, *kind));
    Arc::new(Judged {
        issues,
        choices,
        pending,
        unsettled,
    })
}

pub(crate) fn sheet_rest_query(db: &dyn salsa::Database, character: CharacterInput) -> Arc<Rest> {
    let acts = activations(db, character);
    let judged = sheet_judged(db, character).clone();
    let actions = crate::actions::available_actions(db, character).to_vec();
    let (mut copies, mut copy_names) = (Vec::new(), Vec::new());
    let mut errors: Vec<Json> = (**character.errors(db)).clone();
    errors.extend(crate::db::links(db, character).errors.iter().cloned());
    if acts.limit_reached {
        errors.push(json!({
            "code": "safety-limit-exceeded",
            "data": { "limit": "activations", "max": crate::activation::MAX_ACTIVATIONS },
        }));
    }
    for copy in character
        .features(db)
        .iter()
        .chain(character.inventory(db).iter())
    {
        let id = copy.id(db).clone();
        if crate::view::declares_values(db, character, *copy) {
            let computed = crate::db::computed_values(db, character, *copy);
            if !computed.values.is_empty() {
                copies.push((id.clone(), computed.values.clone()));
            }
            for (name, cause) in &computed.errors {
                errors.push(json!({
                    "code": "formula-error",
                    "data": { "entry": id, "name": name, "cause": cause },
                }));
            }
        }
        if let Some(name) = crate::computed::copy_name(db, character, *copy) {
            copy_names.push((id, name));
        }
    }
    let offers = crate::db::offers(db, character);
    errors.extend(offers.errors.iter().cloned());
    Arc::new(Rest {
        judged,
        copies,
        copy_names,
        errors,
        actions,
        offers: offers.list.clone(),
    })
}

/// computeSheet for `character`, as JSON.
pub fn compute_sheet(db: &dyn salsa::Database, character: CharacterInput) -> Json {
    collect(db, character).to_json()
}

impl Sheet {
    /// The applicable choices, in the order of `pending`.
    pub fn choices(&self) -> &[Json] {
        &self.rest.judged.choices
    }

    pub fn pending(&self) -> &[Json] {
        &self.rest.judged.pending
    }

    /// Each copy with computed values: instance ID, then `(name, value)` in declaration order.
    pub fn copies(&self) -> &[(String, Vec<(String, Value)>)] {
        &self.rest.copies
    }

    pub fn copy_names(&self) -> &[(String, String)] {
        &self.rest.copy_names
    }

    pub fn actions(&self) -> &[crate::actions::Listed] {
        &self.rest.actions
    }

    /// Follow-up offers: derived ones, then the stored ones (decisions.md, "Offers").
    pub fn offers(&self) -> &[crate::offers::Offer] {
        &self.rest.offers
    }

    /// computed-value `formula-error`s and other sheet errors not tied to a field.
    pub fn errors(&self) -> &[Json] {
        &self.rest.errors
    }

    /// The issues, as computeSheet's `issues` lists them: the ranked ones, then `out-of-limits`
    /// in field order.
    pub fn issues_json(&self) -> Vec<Json> {
        issues_with_limits(&self.rest.judged, &self.fields)
    }

    pub fn field(&self, id: &str) -> Option<&FieldValue> {
        self.fields
            .iter()
            .find(|(f, _)| &**f == id)
            .map(|(_, v)| &**v)
    }

    /// computeSheet's output (docs/spec/engine-interface.md).
    pub fn to_json(&self) -> Json {
        let from_fields = FieldParts::of(self.fields.iter(), true);
        let mut issues = issues_json(&self.rest);
        issues.extend(from_fields.limits);
        let mut errors = from_fields.errors;
        errors.extend(self.rest.errors.iter().cloned());
        json!({
            "values": from_fields.values,
            "competing": from_fields.competing,
            "effects": effects_json(&self.effects, &from_fields.suppressed),
            "activations": activations_json(&self.activations),
            "pending": self.rest.judged.pending,
            "choices": self.rest.judged.choices,
            "actions": crate::actions::to_json(&self.rest.actions),
            "offers": crate::offers::to_json(&self.rest.offers),
            "copies": copies_json(&self.rest),
            "copyNames": copy_names_json(&self.rest),
            "issues": issues,
            "errors": errors,
        })
    }
}

/// What computeSheet's output takes from the fields, in field order: `values` (when asked), the
/// `competing` groups, the `out-of-range` errors, the `out-of-limits` issues and the instances
/// stacking suppressed.
pub(crate) struct FieldParts {
    pub(crate) values: Map<String, Json>,
    pub(crate) competing: Vec<Json>,
    pub(crate) errors: Vec<Json>,
    pub(crate) limits: Vec<Json>,
    /// `(field, place among its instances)`, as [`FieldValue::suppressed`] names them.
    pub(crate) suppressed: rustc_hash::FxHashSet<(Arc<str>, usize)>,
}

impl FieldParts {
    pub(crate) fn of<'a>(
        fields: impl Iterator<Item = &'a (Arc<str>, Arc<FieldValue>)>,
        with_values: bool,
    ) -> FieldParts {
        let mut parts = FieldParts {
            values: Map::new(),
            competing: Vec::new(),
            errors: Vec::new(),
            limits: Vec::new(),
            suppressed: Default::default(),
        };
        for (id_arc, field) in fields {
            let id: &str = id_arc;
            if with_values {
                parts.values.insert(id.to_owned(), field_json(field));
            }
            for group in &field.competing {
                let mut g = Map::new();
                g.insert("field".into(), id.into());
                g.insert("op".into(), op_name(group.op).into());
                if let Some(key) = &group.stack_key {
                    g.insert("stackKey".into(), key.clone().into());
                }
                g.insert(
                    "options".into(),
                    group
                        .options
                        .iter()
                        .map(|o| json!({ "id": o.id, "value": o.value.to_json(), "source": o.source.to_json() }))
                        .collect(),
                );
                g.insert("recommended".into(), group.recommended.clone().into());
                g.insert("applied".into(), group.applied.clone().into());
                parts.competing.push(Json::Object(g));
            }
            let field_id: &Arc<str> = id_arc;
            parts
                .suppressed
                .extend(field.suppressed.iter().map(|&at| (field_id.clone(), at)));
            if let Some(range) = &field.out_of_range {
                parts.errors.push(json!({
                    "code": "out-of-range",
                    "message": format!(
                        "the saved value {} is outside the field's bounds; it is read as {}",
                        range.value.to_json(),
                        range.bound.to_json()
                    ),
                    "path": format!("/values/{id}"),
                    "data": { "field": id, "value": range.value.to_json(), "bound": range.bound.to_json() },
                }));
            }
            for limit in &field.out_of_limits {
                parts.limits.push(json!({
                    "code": "out-of-limits",
                    "id": id,
                    "data": {
                        "field": id,
                        "limit": limit.limit,
                        "value": limit.value.to_json(),
                        "bound": limit.bound.to_json(),
                    },
                }));
            }
        }
        parts
    }
}

/// `effects`, each marked `suppressed` when stacking left it out.
pub(crate) fn effects_json(
    effects: &[crate::db::Placed],
    suppressed: &rustc_hash::FxHashSet<(Arc<str>, usize)>,
) -> Vec<Json> {
    effects
        .iter()
        .map(|instance| {
            let mut e = Map::new();
            e.insert("id".into(), instance.option_id.clone().into());
            e.insert("op".into(), op_name(instance.effect.op).into());
            e.insert(
                "target".into(),
                match &instance.field {
                    Some(field) => field.clone().into(),
                    None => serde_json::to_value(&instance.effect.target).unwrap_or(Json::Null),
                },
            );
            e.insert("source".into(), instance.source.to_json());
            let marked = !suppressed.is_empty()
                && instance
                    .field
                    .as_deref()
                    .is_some_and(|f| suppressed.contains(&(Arc::from(f), instance.field_at)));
            if marked {
                e.insert("suppressed".into(), true.into());
            }
            Json::Object(e)
        })
        .collect()
}

pub(crate) fn activations_json(activations: &crate::db::Activations) -> Vec<Json> {
    activations.list.iter().map(activation_json).collect()
}

/// The issues not tied to one field's limits, in order.
/// The ranked issues, then `out-of-limits` in field order.
fn issues_with_limits(judged: &Judged, fields: &[(Arc<str>, Arc<FieldValue>)]) -> Vec<Json> {
    let mut issues: Vec<Json> = judged.issues.iter().map(|(_, _, i)| i.clone()).collect();
    for (id, field) in fields.iter() {
        let id: &str = id;
        for limit in &field.out_of_limits {
            issues.push(json!({
                "code": "out-of-limits",
                "id": id,
                "data": {
                    "field": id,
                    "limit": limit.limit,
                    "value": limit.value.to_json(),
                    "bound": limit.bound.to_json(),
                },
            }));
        }
    }
    issues
}

pub(crate) fn issues_json(rest: &Rest) -> Vec<Json> {
    rest.judged
        .issues
        .iter()
        .map(|(_, _, issue)| issue.clone())
        .collect()
}

pub(crate) fn copies_json(rest: &Rest) -> Map<String, Json> {
    let mut copies = Map::new();
    for (id, values) in &rest.copies {
        let values: Map<String, Json> = values
            .iter()
            .map(|(n, v)| (n.clone(), v.to_json()))
            .collect();
        copies.insert(id.clone(), Json::Object(values));
    }
    copies
}

pub(crate) fn copy_names_json(rest: &Rest) -> Map<String, Json> {
    rest.copy_names
        .iter()
        .map(|(id, name)| (id.clone(), Json::from(name.as_str())))
        .collect()
}

/// One field's entry in `values`.
pub fn field_json(field: &FieldValue) -> Json {
    let mut v = Map::new();
    if let Some(value) = &field.value {
        v.insert("value".into(), value.to_json());
    }
    if let Some(base) = &field.base {
        v.insert("base".into(), base.to_json());
    }
    v.insert(
        "breakdown".into(),
        field
            .breakdown
            .iter()
            .map(|s| json!({ "op": op_name(s.op), "value": s.value.to_json(), "source": s.source.to_json() }))
            .collect(),
    );
    v.insert(
        "tags".into(),
        field.tags.iter().map(|t| Json::from(t.as_str())).collect(),
    );
    if let Some(name) = &field.name {
        v.insert("name".into(), name.clone().into());
    }
    if let Some(error) = &field.error {
        v.insert("error".into(), error.code.as_str().into());
        // The code stays `error` (EC: "`error`: `circular-formula` or a formula error code");
        // why, and where the formula is, beside it.
        let mut detail = Map::new();
        detail.insert("message".into(), error.message.clone().into());
        if let Some(site) = &error.formula {
            detail.insert("formula".into(), site.text.clone().into());
            detail.insert("range".into(), json!([site.range.0, site.range.1]));
            if !site.at.is_empty() {
                detail.insert("at".into(), site.at.clone().into());
            }
        }
        v.insert("errorDetail".into(), Json::Object(detail));
    }
    Json::Object(v)
}

fn activation_json(a: &Activation) -> Json {
    let mut m = Map::new();
    m.insert("item".into(), Json::from(&*a.item));
    if let Some(entry) = &a.entry {
        m.insert("entry".into(), Json::from(&**entry));
    }
    m.insert("via".into(), a.via.as_str().into());
    if a.applied {
        m.insert("scope".into(), "applied".into());
    }
    if let Some(parent) = a.parent {
        m.insert("parent".into(), parent.into());
    }
    if let Some(kept_by) = a.kept_by {
        m.insert("keptBy".into(), kept_by.into());
    }
    if let Some(path) = &a.path {
        m.insert("path".into(), path_json(a.entry.as_deref(), path));
    }
    Json::Object(m)
}
