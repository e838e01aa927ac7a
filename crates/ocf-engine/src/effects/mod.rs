//! Effect instances (EC, computeSheet "Effects"): every effect of every activation whose scope
//! matches, in instance order, one instance per field an effect on a set of fields reaches. The
//! per-field lists are a firewall: a field reads only its own list, so a new effect on AC does not
//! re-run the skills.
//!
//! By the chapter's parts: the instances and the character's index here; effects on a set of
//! fields (EF "Targets") in [`on_fields`]; the per-field side (which fields have instances, a
//! field's own list) in [`per_field`]; stacking groups (EF "Stacking") in [`crate::stacking`].

use std::sync::Arc;

use ocf_formula::Value;
use ocf_model::{Effect, Op, Scope, Target};
use rustc_hash::FxHashMap;

mod on_fields;
mod per_field;

/// Stacking groups, kept here for the crates above ([`crate::stacking`]).
pub use crate::stacking::{StackGroup, stack_counts, stack_groups_of};
/// Kept here for the crates above ([`crate::targets`]).
pub use crate::targets::FIELDS_PER_MASK;
pub use on_fields::FieldsWhere;
pub(crate) use on_fields::matching_fields_query;
pub use per_field::{FieldInstances, MaskKey};
pub(crate) use per_field::{field_effects_query, fields_with_instances_query, same_in_place};

/// Declared in the query map ([`crate::db`]); kept here for the crates above.
pub use crate::db::{
    Activation, CharacterInput, CopyInput, FieldKey, RulesetInput, effect_instances,
};
use crate::db::{activation_instances, activations, matching_fields, rules_instances};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SourceKind {
    Item,
    Template,
    Rules,
    /// A situational choice's incoming-change effects, on a change that selects it.
    Situational,
}

impl SourceKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SourceKind::Item => "item",
            SourceKind::Template => "template",
            SourceKind::Rules => "rules",
            SourceKind::Situational => "situational",
        }
    }
}

/// An instance's source, `{ type, id, entry? }`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Source {
    pub kind: SourceKind,
    /// The content's qualified ID, or the pack for the rules' effects.
    pub id: String,
    pub entry: Option<String>,
}

impl Source {
    pub fn to_json(&self) -> serde_json::Value {
        let mut m = serde_json::Map::new();
        m.insert("type".into(), self.kind.as_str().into());
        m.insert("id".into(), self.id.clone().into());
        if let Some(entry) = &self.entry {
            m.insert("entry".into(), entry.clone().into());
        }
        serde_json::Value::Object(m)
    }
}

/// One effect instance. Where it stands in the character's index (its instance order, its place
/// among its field's instances, its activation) is kept beside it, in [`Placed`]: an activation's
/// instances are made once and shared by every index that lists the activation
/// ([`activation_instances`]), while an activation added in front (a rules-level pick) moves them
/// all.
#[derive(Debug, Clone, PartialEq)]
pub struct Instance {
    /// Shared by the instances of one activation, as are `pack`, `item` and `templates`.
    pub source: Arc<Source>,
    /// The competing-option ID: `<content>#<index or id>`, `#type.<…>` for a content type's,
    /// `@<field>` added for an instance of an effect on a set of fields.
    pub option_id: String,
    pub effect: Arc<Effect>,
    /// The pack the effect's formulas resolve names in.
    pub pack: Arc<str>,
    /// The target field, for effects on fields.
    pub field: Option<String>,
    /// The target field's place among the ruleset's fields, when it is one: found once, when the
    /// instance is made, not on every index that lists it.
    pub place: Option<u32>,
    pub copy: Option<CopyInput>,
    pub applied_entry: Option<usize>,
    /// The content and templates `item` is made of.
    pub item: Arc<str>,
    pub templates: Arc<[String]>,
    /// `pick`, for a choice's effects.
    pub pick: Option<Value>,
    /// `slot`, for the effects of a slotted choice and its inline options.
    pub slot: Option<i64>,
}

impl Instance {
    /// An instance of an effect no content owns (the rules', a situational choice's): its source
    /// `{ type: kind, id }`, no copy, entry or `item`.
    pub fn unowned(
        kind: SourceKind,
        id: &str,
        option_id: String,
        effect: &Arc<Effect>,
        pack: &str,
    ) -> Instance {
        Instance {
            source: Arc::new(Source {
                kind,
                id: id.to_owned(),
                entry: None,
            }),
            option_id,
            effect: effect.clone(),
            pack: pack.into(),
            field: None,
            place: None,
            copy: None,
            applied_entry: None,
            item: "".into(),
            templates: Arc::default(),
            pick: None,
            slot: None,
        }
    }
}

/// An instance where it stands in the character's index.
#[derive(Debug, Clone)]
pub struct Placed {
    /// Instance order.
    pub order: usize,
    /// Its place among its field's instances ([`EffectIndex::by_field`]): what a field value
    /// names it by (a suppressed instance), so that a field's value doesn't read where in the
    /// whole index its instances stand.
    pub field_at: usize,
    /// The activation; `None` for the rules' effects.
    pub activation: Option<usize>,
    pub instance: Arc<Instance>,
}

impl std::ops::Deref for Placed {
    type Target = Instance;
    fn deref(&self) -> &Instance {
        &self.instance
    }
}

impl PartialEq for Placed {
    fn eq(&self, other: &Placed) -> bool {
        self.order == other.order
            && self.field_at == other.field_at
            && self.activation == other.activation
            && (Arc::ptr_eq(&self.instance, &other.instance) || *self.instance == *other.instance)
    }
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct EffectIndex {
    /// Every instance, in instance order.
    pub list: Vec<Placed>,
    /// Each field's instances, in instance order.
    pub by_field: ByField,
}

/// The instances of each field, in instance order: one list of every instance on a ruleset
/// field, grouped by the field's place in the ruleset's fields, with where each field's group
/// starts. The index is built again on every pick, and so it allocates a few vectors, not one per
/// field, nor a key; a target that isn't a ruleset field is listed by its ID.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ByField {
    /// The ruleset whose fields the groups follow, so that a reader needs no read of its own.
    fields: Option<crate::input::SameRuleset>,
    grouped: Vec<Placed>,
    /// `grouped[starts[i]..starts[i + 1]]` are the instances on the `i`th field.
    starts: Vec<u32>,
    unknown: FxHashMap<String, Vec<Placed>>,
}

impl ByField {
    /// The instances on `field`, in instance order.
    pub fn get(&self, field: &str) -> &[Placed] {
        let place = self
            .fields
            .as_ref()
            .and_then(|r| r.0.fields.0.get_index_of(field));
        match place {
            Some(i) => self.group(i),
            None => self.unknown.get(field).map_or(&[], |l| &l[..]),
        }
    }

    /// Whether the `i`th ruleset field has instances.
    fn has(&self, i: usize) -> bool {
        !self.group(i).is_empty()
    }

    fn group(&self, i: usize) -> &[Placed] {
        match (self.starts.get(i), self.starts.get(i + 1)) {
            (Some(&a), Some(&b)) => &self.grouped[a as usize..b as usize],
            _ => &[],
        }
    }

    /// The fields whose instances differ between `self` and `other` (as [`FieldInstances`]
    /// compares them), ruleset fields first in their order.
    pub(crate) fn differing(&self, other: &ByField, ruleset: &ocf_model::Ruleset) -> Vec<String> {
        fn unknown<'a>(map: &'a FxHashMap<String, Vec<Placed>>, f: &str) -> &'a [Placed] {
            map.get(f).map_or(&[], |l| &l[..])
        }
        // Most fields have no instances on either side: their groups' bounds tell it alone, in one
        // pass over both (a trial compares every field).
        let n = ruleset.fields.len();
        let mut out: Vec<String> = if self.starts.len() == n + 1 && other.starts.len() == n + 1 {
            self.starts
                .windows(2)
                .zip(other.starts.windows(2))
                .enumerate()
                .filter(|(_, (a, b))| a[0] != a[1] || b[0] != b[1])
                .map(|(i, _)| i)
                .filter(|&i| !same_in_place(self.group(i), other.group(i)))
                .filter_map(|i| ruleset.fields.0.get_index(i).map(|(f, _)| f.clone()))
                .collect()
        } else {
            (0..n)
                .filter(|&i| !same_in_place(self.group(i), other.group(i)))
                .filter_map(|i| ruleset.fields.0.get_index(i).map(|(f, _)| f.clone()))
                .collect()
        };
        for f in self.unknown.keys().chain(other.unknown.keys()) {
            if !same_in_place(unknown(&self.unknown, f), unknown(&other.unknown, f))
                && !out.contains(f)
            {
                out.push(f.clone());
            }
        }
        out
    }
}

/// An [`EffectIndex`] being built: every instance in instance order, and each instance on a
/// field with its field's place, and how many each field has so far (the next one's `field_at`).
struct Building {
    list: Vec<Placed>,
    fields: Arc<ocf_model::Ruleset>,
    placed: Vec<(u32, Placed)>,
    counts: Vec<u32>,
    unknown: FxHashMap<String, Vec<Placed>>,
}

impl Building {
    fn new(ruleset: &Arc<ocf_model::Ruleset>) -> Building {
        Building {
            list: Vec::new(),
            fields: ruleset.clone(),
            placed: Vec::new(),
            counts: vec![0; ruleset.fields.len()],
            unknown: FxHashMap::default(),
        }
    }

    /// Adds `instance` as the next in instance order, placed on its field.
    fn add(&mut self, instance: Arc<Instance>, activation: Option<usize>) {
        let mut placed = Placed {
            order: self.list.len(),
            field_at: 0,
            activation,
            instance,
        };
        if let Some(field) = placed.instance.field.as_deref() {
            match placed.instance.place {
                Some(i) => {
                    // Debug builds check that no instance lands where no effect can target.
                    if crate::derived::checked() {
                        assert!(
                            crate::formula::targets(&self.fields).can_have(i as usize),
                            "an instance on `{field}`, which no effect of the ruleset targets"
                        );
                    }
                    placed.field_at = self.counts[i as usize] as usize;
                    self.counts[i as usize] += 1;
                    self.placed.push((i, placed.clone()));
                }
                None => {
                    let list = self.unknown.entry(field.to_owned()).or_default();
                    placed.field_at = list.len();
                    list.push(placed.clone());
                }
            }
        }
        self.list.push(placed);
    }

    fn finish(self) -> EffectIndex {
        let mut starts = Vec::with_capacity(self.counts.len() + 1);
        let mut at = 0u32;
        starts.push(0);
        for n in &self.counts {
            at += n;
            starts.push(at);
        }
        // Each instance into its field's group, in instance order: the counts say where each
        // group starts, so no sort is needed (one was a sixth of building the index on a pick).
        let mut next = starts.clone();
        let mut slots: Vec<Option<Placed>> = vec![None; self.placed.len()];
        for (i, placed) in self.placed {
            let at = &mut next[i as usize];
            slots[*at as usize] = Some(placed);
            *at += 1;
        }
        EffectIndex {
            list: self.list,
            by_field: ByField {
                fields: Some(crate::input::SameRuleset(self.fields)),
                grouped: slots.into_iter().flatten().collect(),
                starts,
                unknown: self.unknown,
            },
        }
    }
}

pub(crate) fn effect_instances_query(
    db: &dyn salsa::Database,
    character: CharacterInput,
) -> EffectIndex {
    if let Some(given) = shares_index_with(db, character) {
        let shared = effect_instances(db, given).clone();
        // Debug builds check the judgement against the index built for the derived character.
        if crate::derived::checked() {
            assert_eq!(
                shared,
                build_index(db, character),
                "a shared effect index differs"
            );
        }
        return shared;
    }
    build_index(db, character)
}

/// The character a derived character (a proposed sheet, [`crate::derived`]) has its instances
/// from: the one it was derived from, when both have the same activations and applied entries.
/// An instance is made of its activation (the copy's handle, which a derived character shares
/// while the copy is unchanged, and its picks) and, for an applied entry, of the entry; a
/// proposed change to a value then builds no index again (a fifth of a proposed-sheet action).
fn shares_index_with(
    db: &dyn salsa::Database,
    character: CharacterInput,
) -> Option<CharacterInput> {
    if crate::derived::none_in(db) {
        return None;
    }
    let given = character.derived_from(db)?;
    (character.ruleset(db) == given.ruleset(db)
        && activations(db, character) == activations(db, given)
        && character.applied(db) == given.applied(db))
    .then_some(given)
}

fn build_index(db: &dyn salsa::Database, character: CharacterInput) -> EffectIndex {
    let ruleset_input = character.ruleset(db);
    let ruleset = ruleset_input.ruleset(db);
    let mut index = Building::new(ruleset);
    for instance in rules_instances(db, ruleset_input).iter() {
        index.add(instance.clone(), None);
    }
    let acts = activations(db, character);
    let mut picks_of: FxHashMap<usize, Vec<&crate::db::ChoicePick>> = FxHashMap::default();
    // The rules-level choices' effects, once per pick, are the rules' and come with them, before
    // every activation (EC, "Instance order": "1. The rules").
    for pick in &acts.choice_picks {
        match pick.owner {
            None => {
                for instance in choice_effects(db, pick, None) {
                    expand(db, (ruleset_input, ruleset), instance, &mut |i| {
                        index.add(Arc::new(i), None)
                    });
                }
            }
            Some(a) => picks_of.entry(a).or_default().push(pick),
        }
    }
    for (a, activation) in acts.list.iter().enumerate() {
        let applied_in =
            (activation.copy.is_none() && activation.applied_entry.is_some()).then_some(character);
        let key = ActivationKey::new(
            db,
            ruleset_input,
            activation.item.clone(),
            activation.templates.clone(),
            activation.copy,
            activation.applied_entry,
            applied_in,
            activation.via == crate::db::Via::Template,
            activation.applied,
        );
        for instance in activation_instances(db, key).iter() {
            index.add(instance.clone(), Some(a));
        }
        // The effects of the choices this activation owns, once per pick.
        for pick in picks_of.get(&a).into_iter().flatten() {
            for instance in choice_effects(db, pick, Some(activation)) {
                expand(db, (ruleset_input, ruleset), instance, &mut |i| {
                    index.add(Arc::new(i), Some(a))
                });
            }
        }
    }
    index.finish()
}

/// Each instance of an effect: one per target field worked out, for an effect on fields.
fn expand(
    db: &dyn salsa::Database,
    (ruleset_input, ruleset): (RulesetInput, &ocf_model::Ruleset),
    base: Instance,
    add: &mut dyn FnMut(Instance),
) {
    match &base.effect.target {
        Target::Field(id) => {
            let field = resolve_field(ruleset, &base.pack, id.as_str());
            add(Instance {
                place: place_of(ruleset, &field),
                field: Some(field),
                ..base
            });
        }
        Target::Fields { fields } => {
            let matched = matching_fields(
                db,
                FieldsWhere::new(
                    db,
                    ruleset_input,
                    fields.r#where.0.clone(),
                    base.effect.op == Op::Grant,
                    base.pick.clone(),
                    base.slot,
                ),
            );
            for field in matched.iter() {
                add(Instance {
                    place: place_of(ruleset, field),
                    field: Some(field.clone()),
                    option_id: joined(&[&base.option_id, "@", field]),
                    ..base.clone()
                });
            }
        }
        _ => add(base),
    }
}

/// The rules' own effects' instances (EC, "Instance order": "1. The rules"): made once per
/// ruleset and shared by every character's index.
pub(crate) fn rules_instances_query(
    db: &dyn salsa::Database,
    ruleset_input: RulesetInput,
) -> Arc<[Arc<Instance>]> {
    let ruleset = ruleset_input.ruleset(db);
    let mut out = Vec::new();
    for (i, effect) in ruleset.effects.iter().enumerate() {
        let base = Instance::unowned(
            SourceKind::Rules,
            &effect.pack,
            option_id(&[&effect.pack, ":rules#"], &effect.decl, i),
            &effect.decl,
            &effect.pack,
        );
        expand(db, (ruleset_input, ruleset), base, &mut |i| {
            out.push(Arc::new(i))
        });
    }
    out.into()
}

/// What an activation's instances are made of: its content and templates, its owner copy or
/// applied entry, and whether it is a template's and in `applied` scope. Not where it stands
/// among the activations, so a pick that adds or removes one in front of it leaves its instances
/// as they were. Nor its entry's ID, which the memo reads from the copy or the applied list: a
/// key made of IDs a client chooses would stay interned for every ID a long session ever saw,
/// where copies' handles are reused ([`crate::input::Slots`]).
#[salsa::interned(debug, revisions = usize::MAX)]
pub struct ActivationKey<'db> {
    #[returns(copy)]
    ruleset: RulesetInput,
    #[returns(ref)]
    item: Arc<str>,
    #[returns(ref)]
    templates: Arc<[String]>,
    #[returns(copy)]
    copy: Option<CopyInput>,
    #[returns(copy)]
    applied_entry: Option<usize>,
    /// The character whose `applied` list holds the applied entry (for an activation of one).
    #[returns(copy)]
    applied_in: Option<CharacterInput>,
    #[returns(copy)]
    template: bool,
    #[returns(copy)]
    applied: bool,
}

/// The instances of one activation's effects whose scope matches it, each on its fields: made
/// once for each activation, and shared by every index (every pick's) that lists it.
pub(crate) fn activation_instances_query<'db>(
    db: &'db dyn salsa::Database,
    key: ActivationKey<'db>,
) -> Arc<[Arc<Instance>]> {
    let ruleset_input = key.ruleset(db);
    let ruleset = ruleset_input.ruleset(db);
    let mut out = Vec::new();
    for base in activation_effects(db, key) {
        expand(db, (ruleset_input, ruleset), base, &mut |i| {
            out.push(Arc::new(i))
        });
    }
    out.into()
}

/// The effects of one activation whose scope matches it: its content type's (less those the item
/// suppresses), then the item's own.
fn activation_effects(db: &dyn salsa::Database, key: ActivationKey<'_>) -> Vec<Instance> {
    let ruleset = key.ruleset(db).ruleset(db);
    let item = key.item(db).clone();
    let Some(entry) = ruleset.item(&item) else {
        return Vec::new();
    };
    let scope = if key.applied(db) {
        Scope::Applied
    } else {
        Scope::Holder
    };
    let source = Arc::new(Source {
        kind: if key.template(db) {
            SourceKind::Template
        } else {
            SourceKind::Item
        },
        id: item.to_string(),
        entry: match (key.copy(db), key.applied_entry(db), key.applied_in(db)) {
            (Some(copy), _, _) => Some(copy.id(db).clone()),
            (None, Some(i), Some(c)) => c.applied(db).get(i).map(|e| e.id.clone()),
            _ => None,
        },
    });
    let templates = key.templates(db).clone();
    let (copy, applied_entry) = (key.copy(db), key.applied_entry(db));
    // EC "Items and `item`": "In a template's formulas, `item` is the merged item": the copy's
    // item with its templates, not the template with them.
    let merged: Arc<str> = match (key.template(db), copy) {
        (true, Some(copy)) => copy.item(db).as_str().into(),
        _ => item.clone(),
    };
    let instance = |effect: &Arc<Effect>, option_id: String, pack: &Arc<str>| Instance {
        source: source.clone(),
        option_id,
        effect: effect.clone(),
        pack: pack.clone(),
        field: None,
        place: None,
        copy,
        applied_entry,
        item: merged.clone(),
        templates: templates.clone(),
        pick: None,
        slot: None,
    };
    let mut out = Vec::new();
    if let Some(t) = entry.type_name().and_then(|t| ruleset.content_type(t)) {
        let pack: Arc<str> = t.pack.as_str().into();
        for (i, effect) in t.decl.effects.iter().enumerate() {
            if effect.scope.unwrap_or(Scope::Holder) != scope {
                continue;
            }
            let suppressed = entry.item.suppress.iter().any(|k| match k {
                ocf_model::EffectKey::Index(n) => *n as usize == i,
                ocf_model::EffectKey::Id(id) => effect.id.as_deref() == Some(id.as_str()),
            });
            if suppressed {
                continue;
            }
            out.push(instance(
                effect,
                option_id(&[&item, "#type."], effect, i),
                &pack,
            ));
        }
    }
    let pack: Arc<str> = entry.pack_of("effects").into();
    for (i, effect) in entry.item.effects.iter().enumerate() {
        if effect.scope.unwrap_or(Scope::Holder) != scope {
            continue;
        }
        out.push(instance(effect, option_id(&[&item, "#"], effect, i), &pack));
    }
    out
}

/// An effect's competing-option ID: `parts` joined, then the effect's `id` or, without one, its
/// index among its owner's effects. Joined by hand: `format!` was a third of making an
/// activation's instances.
fn option_id(parts: &[&str], effect: &Effect, index: usize) -> String {
    let mut out = joined(parts);
    match &effect.id {
        Some(id) => out.push_str(id),
        None => {
            let start = out.len();
            let mut n = index;
            loop {
                out.insert(start, char::from(b'0' + (n % 10) as u8));
                n /= 10;
                if n == 0 {
                    break;
                }
            }
        }
    }
    out
}

/// `parts` joined, with room for an effect's key after them.
fn joined(parts: &[&str]) -> String {
    let mut out = String::with_capacity(parts.iter().map(|p| p.len()).sum::<usize>() + 8);
    for part in parts {
        out.push_str(part);
    }
    out
}

/// A choice's effects for one pick. Their option IDs are `<owner>/<choice>#<index|id>`
/// (decisions.md, "Choice effects"); `self` and `item` are the owner's.
fn choice_effects(
    db: &dyn salsa::Database,
    pick: &crate::db::ChoicePick,
    owner: Option<&Activation>,
) -> Vec<Instance> {
    let source = Arc::new(Source {
        kind: match owner {
            Some(a) if a.via == crate::db::Via::Template => SourceKind::Template,
            Some(_) => SourceKind::Item,
            None => SourceKind::Rules,
        },
        id: pick.declared_by.clone(),
        entry: owner.and_then(|a| a.entry.as_deref().map(str::to_owned)),
    });
    let pack: Arc<str> = pick.pack.as_str().into();
    let item: Arc<str> = owner.map_or_else(|| "".into(), |a| crate::view::merged_content(db, a));
    let templates: Arc<[String]> = owner.map_or(&[][..], |a| &a.templates[..]).into();
    pick.effects
        .iter()
        .enumerate()
        .filter(|(_, e)| e.scope.unwrap_or(Scope::Holder) == Scope::Holder)
        .map(|(i, effect)| Instance {
            source: source.clone(),
            option_id: option_id(&[&pick.option_prefix, "#"], effect, i),
            effect: effect.clone(),
            pack: pack.clone(),
            field: None,
            place: None,
            copy: owner.and_then(|a| a.copy),
            applied_entry: None,
            item: item.clone(),
            templates: templates.clone(),
            pick: pick.pick.clone(),
            slot: pick.slot,
        })
        .collect()
}

/// `field`'s place among the ruleset's fields, if it is one.
fn place_of(ruleset: &ocf_model::Ruleset, field: &str) -> Option<u32> {
    ruleset.fields.0.get_index_of(field).map(|i| i as u32)
}

/// A target field ID: qualified as loaded, or resolved in the effect's pack.
fn resolve_field(ruleset: &ocf_model::Ruleset, pack: &str, id: &str) -> String {
    if ruleset.fields.get(id).is_some() {
        return id.to_owned();
    }
    ruleset
        .resolve(pack, id, ocf_model::Namespace::Field)
        .unwrap_or_else(|| id.to_owned())
}

/// The stacking groups of `instances`, in order of their first member: a `source` key groups each
/// source content apart, any other key groups by itself; an instance without a key is in none.
/// Fields (computeSheet) and incoming changes (applyChanges) stack by this one rule.
pub fn stack_groups<'a>(
    settings: &ocf_model::Settings,
    instances: impl Iterator<Item = &'a Instance>,
) -> Vec<crate::stacking::StackGroup> {
    crate::stacking::stack_groups_of(
        settings,
        instances.map(|i| (i.effect.stack_key.as_deref(), i.source.id.as_str())),
    )
}
