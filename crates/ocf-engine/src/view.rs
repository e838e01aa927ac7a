//! What formulas see of the character: the item a copy holds (`item`, templates merged), a copy as
//! `self`, an applied entry as `self`, and the whole character as `character`. Each is a query, so a
//! formula that reads `self` depends on that copy alone.

use std::sync::Arc;

use ocf_dice::value::DiceValue;
use ocf_formula::Decimal;
use ocf_formula::{Formula, MapContext, Root, Value};
use ocf_model::{FieldDecl, FieldType, Keyed, Literal, Ruleset, StateDecl};

use crate::db::{
    CharacterInput, CopyInput, FieldKey, RulesetInput, character_view, item_in_character,
    item_parts, saved_handle,
};
/// Declared in the query map ([`crate::db`]); kept here for the crates above.
pub use crate::db::{copy_self, item_view};

/// The key of [`item_view`]: a content item with the templates applied on it, in order.
#[salsa::interned(debug, revisions = usize::MAX)]
pub struct ItemKey<'db> {
    #[returns(copy)]
    pub ruleset: RulesetInput,
    #[returns(ref)]
    pub content: String,
    #[returns(ref)]
    pub templates: Vec<String>,
}

impl<'db> ItemKey<'db> {
    /// The item a copy holds, with its saved templates: what `item` is for the copy's formulas.
    pub fn of_copy(db: &'db dyn salsa::Database, copy: CopyInput) -> ItemKey<'db> {
        ItemKey::new(
            db,
            copy.ruleset(db),
            copy.item(db).as_str(),
            &copy.templates(db)[..],
        )
    }

    /// `item` for the formulas of activation `a`: its content with its templates merged over it,
    /// and for a copy's template, the copy's item with them (EC, "Items and `item`": "In a
    /// template's formulas, `item` is the merged item").
    pub fn of_activation(
        db: &'db dyn salsa::Database,
        ruleset: RulesetInput,
        a: &crate::db::Activation,
    ) -> ItemKey<'db> {
        ItemKey::new(db, ruleset, &*merged_content(db, a), &a.templates[..])
    }
}

/// The content `item` is made of in activation `a`'s formulas (templates merged over it): a
/// copy's template's is the copy's item, every other activation's its own content.
pub fn merged_content(db: &dyn salsa::Database, a: &crate::db::Activation) -> Arc<str> {
    match (a.via, a.copy) {
        (crate::db::Via::Template, Some(copy)) => copy.item(db).as_str().into(),
        _ => a.item.clone(),
    }
}

/// The unqualified part of a qualified ID (`weapon` of `5e-srd-5.1:weapon`).
pub fn bare(id: &str) -> &str {
    id.split_once(':').map_or(id, |(_, rest)| rest)
}

/// `item` for content `key.content` with `key.templates` merged over it (EC, "Items and `item`"):
/// `id`, `type` (unqualified), `tags` (the base item's, then each template's less its
/// `removeTags`) and each item field read by its declared type. `None` for unknown content.
///
/// Formula fields see `item` (the base item's literal fields) only: `character` is bound by
/// [`item_in_character`], which the sheet's formulas read.
pub(crate) fn item_view_query<'db>(
    db: &'db dyn salsa::Database,
    key: ItemKey<'db>,
) -> Option<Value> {
    let (members, pending) = item_parts(db, key).as_ref()?;
    let layers = |i: usize| {
        let base = item_view(db, key.layer(db, 0)).clone();
        let prior = item_view(db, key.layer(db, i)).clone();
        (base, prior)
    };
    Some(with_formula_fields(members, pending, None, &layers))
}

/// `item` as the sheet's formulas and copy aggregates see it: formula item fields evaluated with
/// `item` and `character` bound (EC, "Items and `item`"). An item without formula fields is
/// [`item_view`], so it doesn't depend on the character's lists.
pub(crate) fn item_in_character_query<'db>(
    db: &'db dyn salsa::Database,
    character: CharacterInput,
    key: ItemKey<'db>,
) -> Option<Value> {
    let (members, pending) = item_parts(db, key).as_ref()?;
    if pending.is_empty() {
        return item_view(db, key).clone();
    }
    // `character` is the raw view: its copies' state defaults read `item_view`, never this
    // query, so there is no loop back here.
    let layers = |i: usize| {
        let base = item_in_character(db, character, key.layer(db, 0)).clone();
        let prior = item_in_character(db, character, key.layer(db, i)).clone();
        (base, prior)
    };
    let character = character_view(db, character).clone();
    Some(with_formula_fields(
        members,
        pending,
        Some(character),
        &layers,
    ))
}

impl<'db> ItemKey<'db> {
    /// The item merged with only its first `n` templates: `base` for `n = 0`, a template's `prior`
    /// for its own place.
    fn layer(self, db: &'db dyn salsa::Database, n: usize) -> ItemKey<'db> {
        let templates = self.templates(db);
        ItemKey::new(
            db,
            self.ruleset(db),
            self.content(db).as_str(),
            &templates[..n.min(templates.len())],
        )
    }
}

/// Formula item fields' texts, by name, waiting for their context, with the place of the template
/// that wrote each (`None`: the base item, its type's default or a template field's).
pub(crate) type PendingFields = Vec<(String, String, Option<usize>)>;

/// The item's literal members (`id`, `type`, `tags` and literal fields) and its formula fields.
pub(crate) fn item_parts_query<'db>(
    db: &'db dyn salsa::Database,
    key: ItemKey<'db>,
) -> Option<(Vec<(String, Value)>, PendingFields)> {
    let ruleset = key.ruleset(db).ruleset(db);
    let entry = ruleset.item(key.content(db))?;
    let type_name = entry.type_name().unwrap_or_default();
    let type_decl = ruleset.content_type(type_name);

    // Field values as written, later templates replacing earlier ones; `null` removes. Each
    // remembers the template that wrote it, whose formulas see `base` and `prior`.
    let mut written: Keyed<(Literal, Option<usize>)> = Keyed::default();
    if let Some(decl) = type_decl {
        for (name, field) in decl.decl.fields.iter() {
            if let Some(default) = &field.default {
                written.0.insert(name.to_owned(), (default.clone(), None));
            }
        }
    }
    for (name, field) in ruleset.template_fields.iter() {
        if let Some(default) = &field.decl.default {
            written
                .0
                .entry(name.to_owned())
                .or_insert((default.clone(), None));
        }
    }
    for (name, value) in entry.item.fields.iter() {
        written.0.insert(name.to_owned(), (value.clone(), None));
    }
    let mut tags: Vec<String> = entry.item.tags.iter().map(|t| t.0.clone()).collect();
    for (place, template) in key.templates(db).iter().enumerate() {
        let Some(t) = ruleset.item(template) else {
            continue;
        };
        for (name, value) in t.item.fields.iter() {
            if value.is_null() {
                written.0.shift_remove(name);
            } else {
                written
                    .0
                    .insert(name.to_owned(), (value.clone(), Some(place)));
            }
        }
        tags.retain(|tag| !t.item.remove_tags.iter().any(|r| r.0 == *tag));
        tags.extend(t.item.tags.iter().map(|t| t.0.clone()));
    }
    let mut seen = rustc_hash::FxHashSet::default();
    tags.retain(|t| seen.insert(t.clone()));

    // Literal fields first, so formula fields can read them as `item.<name>`.
    let field_type = |name: &str| {
        type_decl
            .and_then(|d| d.decl.fields.get(name).map(|f| f.r#type))
            .or_else(|| ruleset.template_fields.get(name).map(|f| f.decl.r#type))
    };
    let mut members: Vec<(String, Value)> = vec![
        ("id".into(), Value::string(key.content(db).as_str())),
        ("type".into(), Value::string(bare(type_name))),
        (
            "tags".into(),
            Value::list(tags.iter().map(|t| Value::string(t.as_str())).collect()),
        ),
    ];
    let mut pending = Vec::new();
    for (name, (value, place)) in written.iter() {
        match (field_type(name), value) {
            (
                Some(
                    FieldType::Integer | FieldType::Decimal | FieldType::Boolean | FieldType::Dice,
                ),
                Literal::String(text),
            ) => pending.push((name.to_owned(), text.clone(), *place)),
            (ty, value) => {
                if let Some(v) = literal_value(value, ty) {
                    members.push((name.to_owned(), v));
                }
            }
        }
    }
    Some((members, pending))
}

/// The item: its literal members, then each formula field evaluated with `item` (the item's
/// literal fields) and, when given, `character`; one that fails is absent (decisions.md, "Item
/// field formulas"). A template's values also see `base`, the base item alone, and `prior`, the
/// item as merged before that template (EC, "Items and `item`"), which `layers` gives for a
/// template's place.
fn with_formula_fields(
    members: &[(String, Value)],
    pending: &[(String, String, Option<usize>)],
    character: Option<Value>,
    layers: &dyn Fn(usize) -> (Option<Value>, Option<Value>),
) -> Value {
    let literal_item = Value::map(members.iter().map(|(k, v)| (k.as_str(), v.clone())));
    let mut ctx = MapContext::new().with_root(Root::Item, literal_item);
    if let Some(character) = character {
        ctx = ctx.with_root(Root::Character, character);
    }
    let mut out = members.to_vec();
    for (name, text, place) in pending {
        let Ok(formula) = Formula::parse(text) else {
            continue;
        };
        let value = match place {
            None => formula.evaluate(&ctx),
            Some(place) => {
                let mut ctx = ctx.clone();
                let (base, prior) = layers(*place);
                if let Some(base) = base {
                    ctx = ctx.with_root(Root::Base, base);
                }
                if let Some(prior) = prior {
                    ctx = ctx.with_root(Root::Prior, prior);
                }
                formula.evaluate(&ctx)
            }
        };
        if let Ok(value) = value {
            out.push((name.clone(), value));
        }
    }
    Value::map(out)
}

/// A literal read by its declared type: numbers, booleans, strings and lists as JSON reads them,
/// an int widened for a decimal, dice notation for a dice value.
pub fn literal_value(literal: &Literal, ty: Option<FieldType>) -> Option<Value> {
    match (ty, literal) {
        (Some(FieldType::Dice), Literal::String(text)) => {
            ocf_formula::dice_from_notation(text).ok().map(Value::dice)
        }
        (Some(FieldType::Dice), Literal::Number(n)) => n
            .as_i64()
            .map(|n| Value::dice(ocf_dice::value::DiceValue::flat(n))),
        (Some(FieldType::Decimal), Literal::Number(_)) => {
            let v = Value::from_json(literal).ok()?;
            v.as_decimal().map(Value::Decimal)
        }
        _ => Value::from_json(literal).ok(),
    }
}

/// The state keys a copy of `content` with `templates` declares: the content type's, the item's,
/// then each template's, a later one replacing an earlier.
pub fn state_decls<'r>(
    ruleset: &'r Ruleset,
    content: &str,
    templates: &[String],
) -> Vec<(&'r str, &'r StateDecl)> {
    let mut decls: Vec<(&str, &StateDecl)> = Vec::new();
    let mut push = |state: &'r Keyed<StateDecl>| {
        for (key, decl) in state.iter() {
            match decls.iter_mut().find(|(k, _)| *k == key) {
                Some(slot) => slot.1 = decl,
                None => decls.push((key, decl)),
            }
        }
    };
    if let Some(entry) = ruleset.item(content) {
        if let Some(t) = entry.type_name().and_then(|t| ruleset.content_type(t)) {
            push(&t.decl.state);
        }
        push(&entry.item.state);
    }
    for template in templates {
        if let Some(t) = ruleset.item(template) {
            push(&t.item.state);
        }
    }
    decls
}

/// The state values of an entry: each declared key's saved value, else its literal default; a key
/// with neither is absent. A `{ formula }` default is evaluated with `item` bound; one that fails is
/// absent (EC, "Formula state defaults").
pub(crate) fn state_values(
    decls: &[(&str, &StateDecl)],
    saved: &Keyed<Literal>,
    ctx: &dyn ocf_formula::Context,
) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for (key, decl) in decls {
        let value = match saved.get(key) {
            Some(v) => literal_value(v, Some(decl.r#type)),
            None => match &decl.default {
                Some(ocf_model::Computed::Literal(v)) => literal_value(v, Some(decl.r#type)),
                Some(ocf_model::Computed::Formula { formula }) => Formula::parse(formula.as_str())
                    .ok()
                    .and_then(|f| f.evaluate(ctx).ok()),
                None => None,
            },
        };
        if let Some(value) = value {
            out.push(((*key).to_owned(), value));
        }
    }
    // Saved values of keys nothing declares never get here: they are `unknown-key` errors, left
    // out (crate::file_check).
    out
}

/// The item a copy holds, with its saved templates.
pub fn copy_item(db: &dyn salsa::Database, copy: CopyInput) -> Option<&Value> {
    let key = ItemKey::of_copy(db, copy);
    item_view(db, key).as_ref()
}

/// What a copy's formula state defaults see (EC, "Formula state defaults": "as `addItem` evaluates
/// them (`item` the copy's item with its templates, saved and kept; input fields only; in the
/// content type's pack)"). Input fields are read raw, as activation conditions read them, so a
/// default sits on no loop.
struct StateDefaults<'a> {
    db: &'a dyn salsa::Database,
    character: CharacterInput,
    pack: &'a str,
    item: Option<&'a Value>,
}

impl ocf_formula::Context for StateDefaults<'_> {
    fn root(&self, root: Root) -> Result<Option<Value>, ocf_formula::ContextError> {
        match (root, self.item) {
            (Root::Item, Some(item)) => Ok(Some(item.clone())),
            _ => Err(ocf_formula::ContextError::unknown(format!(
                "`{root}` is not bound in a state default"
            ))),
        }
    }

    fn field(&self, id: &str) -> Result<Option<Value>, ocf_formula::ContextError> {
        let ruleset = self.character.ruleset(self.db).ruleset(self.db);
        let qualified = ruleset
            .resolve(self.pack, id, ocf_model::Namespace::Field)
            .or_else(|| {
                (id.contains(':') && ruleset.fields.get(id).is_some()).then(|| id.to_owned())
            })
            .ok_or_else(|| ocf_formula::ContextError::unknown(format!("no field `{id}`")))?;
        raw_input(self.db, self.character, &qualified)
            .map(Some)
            .ok_or_else(|| {
                ocf_formula::ContextError::new(
                    ocf_formula::ErrorCode::TypeMismatch,
                    format!("a state default reads input fields only, not `{id}`"),
                )
            })
    }
}

/// A copy as `self` (EC, "Copies and `self`"): `id`, `equipped`, `quantity`, `templates` and its
/// state keys.
pub(crate) fn copy_self_query(
    db: &dyn salsa::Database,
    character: CharacterInput,
    copy: CopyInput,
) -> Value {
    let rules = copy.ruleset(db).ruleset(db);
    let templates = copy.templates(db);
    let item = copy_item(db, copy);
    let decls = state_decls(rules, copy.item(db), templates);
    let pack = rules
        .item(copy.item(db))
        .and_then(|e| e.type_name())
        .and_then(|t| rules.content_type(t))
        .map_or("", |t| t.pack.as_str());
    let defaults = StateDefaults {
        db,
        character,
        pack,
        item,
    };
    let mut members = vec![
        ("id".to_owned(), Value::string(copy.id(db).as_str())),
        ("equipped".to_owned(), Value::Bool(copy.equipped(db))),
        ("quantity".to_owned(), Value::Int(copy.quantity(db) as i64)),
        (
            "templates".to_owned(),
            Value::list(
                templates
                    .iter()
                    .map(|t| Value::string(t.as_str()))
                    .collect(),
            ),
        ),
    ];
    members.extend(state_values(&decls, copy.state(db), &defaults));
    Value::map(members)
}

/// An applied entry as `self` and `entry`: `id` and its state keys.
pub fn applied_self(ruleset: &Ruleset, entry: &ocf_model::AppliedEntry) -> Value {
    let decls = state_decls(ruleset, entry.source.as_str(), &[]);
    let mut members = vec![("id".to_owned(), Value::string(entry.id.as_str()))];
    members.extend(state_values(&decls, &entry.state, &MapContext::new()));
    Value::map(members)
}

/// `character` (EC, "`character`"): the file's `id`, `creating`, `inventory` and `features` as lists of copies
/// `{ id, item, type, equipped, quantity, state }`, and the raw `applied` list.
pub(crate) fn character_view_query(db: &dyn salsa::Database, character: CharacterInput) -> Value {
    let rules = character.ruleset(db).ruleset(db);
    let list = |copies: &Arc<Vec<CopyInput>>| {
        Value::list(
            copies
                .iter()
                .map(|c| copy_view(db, character, *c))
                .collect(),
        )
    };
    let applied = character
        .applied(db)
        .iter()
        .map(|e| {
            let decls = state_decls(rules, e.source.as_str(), &[]);
            Value::map([
                ("id", Value::string(e.id.as_str())),
                ("source", Value::string(e.source.as_str())),
                ("active", Value::Bool(e.active.unwrap_or(true))),
                (
                    "state",
                    Value::map(state_values(&decls, &e.state, &MapContext::new())),
                ),
            ])
        })
        .collect();
    // `character.id` is the file's `id`: a handoff names the running character by it (DA
    // "Handoffs"; EA "Handoffs" 2).
    Value::map([
        ("id", Value::string(character.id(db).as_str())),
        ("creating", Value::Bool(character.creating(db))),
        ("inventory", list(character.inventory(db))),
        ("features", list(character.features(db))),
        ("applied", Value::list(applied)),
    ])
}

/// A copy as `character.inventory` lists it: `{ id, item, type, equipped, quantity, state }`.
pub fn copy_view(db: &dyn salsa::Database, character: CharacterInput, copy: CopyInput) -> Value {
    Value::map(list_members(db, character, copy))
}

/// A copy as the copy aggregates see it (`copy`): the list view with `tags`, `templates` and
/// `fields` added, the item read as the sheet's formulas read it, so a formula item field that
/// reads `character` has its value here too (decisions.md, "Copy aggregates"). That item reads
/// the raw `character` view only, never a field or an aggregate, so no loop can pass through it.
pub fn aggregate_copy_view(
    db: &dyn salsa::Database,
    character: CharacterInput,
    copy: CopyInput,
) -> Value {
    let key = ItemKey::of_copy(db, copy);
    let (tags, fields) = match item_in_character(db, character, key) {
        Some(Value::Map(m)) => (
            m.get("tags")
                .cloned()
                .unwrap_or_else(|| Value::list(vec![])),
            Value::map(
                m.iter()
                    .filter(|(k, _)| !["id", "type", "tags"].contains(&&***k))
                    .map(|(k, v)| (k.clone(), v.clone())),
            ),
        ),
        _ => (Value::list(vec![]), Value::map::<&str>([])),
    };
    let mut members = list_members(db, character, copy);
    members.push(("tags", tags));
    members.push((
        "templates",
        Value::list(
            copy.templates(db)
                .iter()
                .map(|t| Value::string(t.as_str()))
                .collect(),
        ),
    ));
    members.push(("fields", fields));
    Value::map(members)
}

/// The members of [`copy_view`].
fn list_members(
    db: &dyn salsa::Database,
    character: CharacterInput,
    copy: CopyInput,
) -> Vec<(&'static str, Value)> {
    let rules = copy.ruleset(db).ruleset(db);
    let type_name = rules
        .item(copy.item(db))
        .and_then(|e| e.type_name())
        .map(bare)
        .unwrap_or_default();
    let state = match copy_self(db, character, copy) {
        Value::Map(m) => {
            let skip = ["id", "equipped", "quantity", "templates"];
            Value::map(
                m.iter()
                    .filter(|(k, _)| !skip.contains(&&***k))
                    .map(|(k, v)| (k.clone(), v.clone())),
            )
        }
        other => other.clone(),
    };
    vec![
        ("id", Value::string(copy.id(db).as_str())),
        ("item", Value::string(copy.item(db).as_str())),
        ("type", Value::string(type_name)),
        ("equipped", Value::Bool(copy.equipped(db))),
        ("quantity", Value::Int(copy.quantity(db) as i64)),
        ("state", state),
    ]
}

/// An input field's raw value, as activation conditions read it: the saved value, else the
/// default, else empty. `None` for a field that isn't an input.
pub fn raw_input(
    db: &dyn salsa::Database,
    character: CharacterInput,
    field: &str,
) -> Option<Value> {
    let decl = character.ruleset(db).ruleset(db).field(field)?;
    if decl.decl.input != Some(true) {
        return None;
    }
    let key = FieldKey::new(db, character, field);
    let saved = saved_handle(db, key).and_then(|h| h.value(db).clone());
    saved
        .as_ref()
        .and_then(|lit| literal_value(lit, Some(decl.decl.r#type)))
        .or_else(|| default_value(&decl.decl))
}

/// A field's `default`, else the empty value of its type (EC: "No field type starts as `null`").
pub(crate) fn default_value(decl: &FieldDecl) -> Option<Value> {
    if let Some(default) = &decl.default {
        return literal_value(default, Some(decl.r#type));
    }
    Some(match decl.r#type {
        FieldType::Integer => Value::Int(0),
        FieldType::Decimal => Value::Decimal(Decimal::ZERO),
        FieldType::Boolean => Value::Bool(false),
        FieldType::String | FieldType::Enum | FieldType::Id => Value::string(""),
        FieldType::Set => Value::list(Vec::new()),
        FieldType::Dice => Value::dice(DiceValue::flat(0)),
    })
}

/// Whether the copy's content type, its item or one of its templates declares computed values.
/// A copy without any asks no [`crate::db::computed_values`]: a memo and a key for each copy of a sheet
/// cost a cold sheet of 100 copies 0.25 M instructions for nothing.
pub fn declares_values(
    db: &dyn salsa::Database,
    character: CharacterInput,
    copy: CopyInput,
) -> bool {
    let ruleset = character.ruleset(db).ruleset(db);
    let Some(entry) = ruleset.item(copy.item(db)) else {
        return false;
    };
    !entry.item.computed.is_empty()
        || entry
            .type_name()
            .and_then(|t| ruleset.content_type(t))
            .is_some_and(|t| !t.decl.computed.is_empty())
        || copy
            .templates(db)
            .iter()
            .any(|t| ruleset.item(t).is_some_and(|t| !t.item.computed.is_empty()))
}
