//! Parameters and situational choices (EA "Starting an action" 2 and 3; DA "Field parameters").

use ocf_formula::Value;
use ocf_model::{Action, FieldType, Keyed, Namespace, ParamDecl, ParamEntry, Ruleset};
use serde_json::{Map, Value as Json};

use crate::context::ActionContext;
use crate::error::ActionError;

/// A parameter's value as it was given: by the app (JSON) or by a formula (a `use`'s fixed value,
/// an action step's `params`).
pub enum Given {
    Json(Json),
    Value(Value),
}

fn type_name(ty: FieldType) -> String {
    serde_json::to_value(ty)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

fn wrong_type(name: &str, decl: &ParamDecl, got: &str) -> ActionError {
    ActionError::new(
        "wrong-type",
        format!(
            "parameter `{name}` is a {}, not {got}",
            type_name(decl.r#type)
        ),
    )
    .with("param", name)
    .with("expected", type_name(decl.r#type))
}

/// The action's `params` root: each declared parameter from `given` (a `use`'s fixed values win),
/// checked against its declaration on the running character's sheet.
pub fn bind_params(
    ctx: &ActionContext<'_>,
    ruleset: &Ruleset,
    def: &Action,
    pack: &str,
    mut given: Vec<(String, Given)>,
    fixed: Option<(&Keyed<ParamEntry>, &ActionContext<'_>)>,
) -> Result<Value, ActionError> {
    if let Some((fixed, fixed_ctx)) = fixed {
        for (name, entry) in fixed.iter() {
            if let ParamEntry::Fixed(formula) = entry {
                let value = fixed_ctx.eval(formula.as_str())?;
                given.retain(|(n, _)| n != name);
                given.push((name.to_owned(), Given::Value(value)));
            }
        }
    }
    bind_each(def, &given, |name, decl, v| {
        let value = typed_value(name, decl, v)?;
        on_sheet(ctx, ruleset, pack, name, decl, value)
    })
}

/// A handoff's parameters typed by the used action (EA "Handoffs" 1: "types them: a missing
/// required one is `missing-param`, a wrong type `wrong-type`"). Nothing here reads a sheet: the
/// used action runs on the participant's character, so a field parameter's `where`, tags and value
/// and a content parameter's `where` are that character's, checked by its own startAction (EA
/// "Starting an action" 2), not on the actor's sheet.
pub fn type_params(def: &Action, given: &[(String, Given)]) -> Result<(), ActionError> {
    bind_each(def, given, typed_value).map(drop)
}

/// Each declared parameter of `def`: the given value through `check`, else its default, else
/// absent when optional, else `missing-param`. A null counts as not given.
fn bind_each(
    def: &Action,
    given: &[(String, Given)],
    mut check: impl FnMut(&str, &ParamDecl, &Given) -> Result<Value, ActionError>,
) -> Result<Value, ActionError> {
    let mut out: Vec<(String, Value)> = Vec::new();
    for (name, entry) in def.params.iter() {
        let ParamEntry::Declared(decl) = entry else {
            continue;
        };
        let value = given
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v)
            .filter(|v| !matches!(v, Given::Json(Json::Null) | Given::Value(Value::Null)));
        let value = match value {
            Some(v) => Some(check(name, decl, v)?),
            None => match &decl.default {
                Some(d) => ocf_engine::view::literal_value(d, Some(decl.r#type)),
                None if decl.optional == Some(true) => None,
                None => {
                    return Err(ActionError::new(
                        "missing-param",
                        format!("the required parameter `{name}` is missing"),
                    )
                    .with("param", name));
                }
            },
        };
        if let Some(value) = value {
            out.push((name.to_owned(), value));
        }
    }
    Ok(Value::map(out))
}

/// The given value read as the declared type (dice from notation, a field parameter's view by its
/// `id`), `wrong-type` when it isn't one, or isn't one of an enum's values.
fn typed_value(name: &str, decl: &ParamDecl, given: &Given) -> Result<Value, ActionError> {
    let value = match given {
        Given::Value(v) => v.clone(),
        Given::Json(j) => match (decl.r#type, j) {
            (FieldType::Dice, Json::String(text)) => ocf_formula::dice_from_notation(text)
                .map(Value::dice)
                .map_err(|_| wrong_type(name, decl, "dice notation it can read"))?,
            _ => ocf_engine::view::literal_value(j, Some(decl.r#type))
                .ok_or_else(|| wrong_type(name, decl, "that value"))?,
        },
    };
    // An action step passes a field parameter's view on by its `id`, dice as notation.
    let value = match (decl.r#type, &value) {
        (FieldType::Id, Value::Map(m)) => m.get("id").cloned().unwrap_or(value.clone()),
        (FieldType::Dice, Value::String(text)) => ocf_formula::dice_from_notation(text)
            .map(Value::dice)
            .map_err(|_| wrong_type(name, decl, "dice notation it can read"))?,
        (FieldType::Dice, Value::Int(n)) => Value::dice(ocf_dice::DiceValue::flat(*n)),
        (FieldType::Decimal, Value::Int(n)) => ocf_formula::Decimal::from_int(*n)
            .map(Value::Decimal)
            .unwrap_or(Value::Int(*n)),
        _ => value,
    };
    let fits = matches!(
        (decl.r#type, &value),
        (FieldType::Integer, Value::Int(_))
            | (FieldType::Decimal, Value::Decimal(_))
            | (FieldType::Boolean, Value::Bool(_))
            | (
                FieldType::String | FieldType::Enum | FieldType::Id,
                Value::String(_)
            )
            | (FieldType::Set, Value::List(_))
            | (FieldType::Dice, Value::Dice(_))
    );
    if !fits {
        return Err(wrong_type(name, decl, &format!("a {}", value.type_name())));
    }
    if decl.r#type == FieldType::Enum && !decl.values.is_empty() {
        let ok = decl
            .values
            .iter()
            .any(|l| ocf_engine::view::literal_value(l, None).is_some_and(|v| v.equals(&value)));
        if !ok {
            return Err(wrong_type(name, decl, "one of its values"));
        }
    }
    Ok(value)
}

/// A typed ID parameter checked on the running character's sheet: a field parameter becomes its
/// view `{ id, type, tags, value }` if its field is in the `where` set, a content parameter its
/// qualified ID if it is an item of the type matching `where` (`invalid-option` otherwise).
fn on_sheet(
    ctx: &ActionContext<'_>,
    ruleset: &Ruleset,
    pack: &str,
    name: &str,
    decl: &ParamDecl,
    value: Value,
) -> Result<Value, ActionError> {
    if decl.r#type != FieldType::Id {
        return Ok(value);
    }
    let Value::String(text) = &value else {
        return Ok(value);
    };
    let invalid = || {
        ActionError::new(
            "invalid-option",
            format!("`{text}` is not an option of parameter `{name}`"),
        )
        .with("param", name)
        .with("option", text.as_ref())
    };
    match decl.of.as_ref().map(|o| o.as_str()) {
        Some("field") => {
            // A field parameter: `{ id, type, tags, value }`, tags as on the sheet.
            let qualified = ruleset
                .resolve(pack, text, Namespace::Field)
                .or_else(|| ruleset.fields.get(text).map(|_| text.to_string()))
                .ok_or_else(invalid)?;
            let fv = ocf_engine::field_value(
                ctx.sheet.db,
                ocf_engine::FieldKey::new(ctx.sheet.db, ctx.sheet.character, &*qualified),
            );
            let decl_f = ruleset.fields.get(&qualified).ok_or_else(invalid)?;
            let tags = fv
                .tags
                .iter()
                .map(|t| Value::String(ocf_formula::value::shared(t.as_str())))
                .collect();
            let view = ocf_engine::context::field_view_with_tags(&qualified, decl_f, tags);
            if let Some(w) = &decl.r#where {
                let mut c = child(ctx);
                c.bind(ocf_formula::Root::Item, view.clone());
                if !c.condition(w.as_str()).unwrap_or(false) {
                    return Err(invalid());
                }
            }
            let mut view = view;
            crate::context::set_member(&mut view, "value", fv.value.clone().unwrap_or_default());
            Ok(view)
        }
        Some(of) => {
            let qualified = ruleset
                .resolve(pack, text, Namespace::Content)
                .or_else(|| ruleset.item(text).map(|_| text.to_string()))
                .ok_or_else(invalid)?;
            let entry = ruleset.item(&qualified).ok_or_else(invalid)?;
            let of_type = ruleset
                .resolve(pack, of, Namespace::ContentType)
                .unwrap_or_else(|| of.to_owned());
            if entry.type_name() != Some(of_type.as_str()) {
                return Err(invalid());
            }
            if let Some(w) = &decl.r#where {
                let key = ocf_engine::view::ItemKey::new(
                    ctx.sheet.db,
                    ctx.sheet.character.ruleset(ctx.sheet.db),
                    qualified.clone(),
                    Vec::new(),
                );
                let item = ocf_engine::view::item_view(ctx.sheet.db, key)
                    .clone()
                    .unwrap_or_default();
                let mut c = child(ctx);
                c.bind(ocf_formula::Root::Item, item);
                if !c.condition(w.as_str()).unwrap_or(false) {
                    return Err(invalid());
                }
            }
            Ok(Value::string(qualified))
        }
        None => Ok(value),
    }
}

/// A context like `ctx` whose `item` and `self` are free to rebind; the action's own are
/// `action.item` and `action.self`.
fn child<'a>(ctx: &ActionContext<'a>) -> ActionContext<'a> {
    let mut action = crate::context::empty_map();
    if let Some(item) = ctx.item_value() {
        crate::context::set_member(&mut action, "item", item);
    }
    if let Some(s) = ctx.self_value() {
        crate::context::set_member(&mut action, "self", s);
    }
    let mut c = ActionContext::new(
        ctx.sheet.db,
        ctx.sheet.character,
        ctx.sheet.bindings.pack,
        ocf_engine::context::SelfRef::None,
        None,
    );
    c.copy_bound_roots(ctx);
    c.bind(ocf_formula::Root::Action, action);
    c
}

/// The situational values: every declared choice by local ID (given, else its default), and the
/// qualified IDs of the selected ones, whose effects apply to the rolls they are offered for.
pub struct Situational {
    pub values: Value,
    pub selected: Vec<String>,
    /// Qualified ID to value, as given to nested actions.
    pub by_id: Vec<(String, Value)>,
}

pub fn bind_situational(
    ctx: &ActionContext<'_>,
    ruleset: &Ruleset,
    pack: &str,
    given: &[(String, Value)],
    check_available: bool,
) -> Result<Situational, ActionError> {
    let mut by_id: Vec<(String, Value)> = Vec::new();
    for (id, value) in given {
        let qualified = ruleset
            .resolve(pack, id, Namespace::Situational)
            .or_else(|| ruleset.situational.get(id).map(|_| id.clone()))
            .ok_or_else(|| {
                ActionError::new("unknown-reference", format!("no situational choice `{id}`"))
                    .with("kind", "situational")
                    .with("id", id.as_str())
            })?;
        by_id.retain(|(q, _)| *q != qualified);
        by_id.push((qualified, value.clone()));
    }
    let mut values: Vec<(&str, Value)> = Vec::with_capacity(ruleset.situational.len());
    let mut selected = Vec::new();
    for (qualified, decl) in ruleset.situational.iter() {
        let local = qualified.split_once(':').map_or(qualified, |(_, l)| l);
        let default = decl
            .decl
            .default
            .as_ref()
            .and_then(|d| ocf_engine::view::literal_value(d, Some(decl.decl.r#type)))
            .unwrap_or(match decl.decl.r#type {
                FieldType::Boolean => Value::Bool(false),
                _ => Value::Null,
            });
        let value = match by_id.iter().find(|(q, _)| q == qualified) {
            Some((_, v)) => {
                let fits = match (decl.decl.r#type, v) {
                    (FieldType::Boolean, Value::Bool(_)) | (FieldType::Integer, Value::Int(_)) => {
                        true
                    }
                    (FieldType::Enum, Value::String(_)) => decl.decl.values.iter().any(|l| {
                        ocf_engine::view::literal_value(l, None).is_some_and(|x| x.equals(v))
                    }),
                    _ => false,
                };
                if !fits {
                    return Err(ActionError::new(
                        "wrong-type",
                        format!("situational `{qualified}` doesn't take that value"),
                    )
                    .with("target", qualified)
                    .with("expected", type_name(decl.decl.r#type)));
                }
                v.clone()
            }
            None => default.clone(),
        };
        let is_selected = match &value {
            Value::Bool(b) => *b,
            v => !v.equals(&default),
        };
        if is_selected {
            if check_available
                && let Some(available) = &decl.decl.available
                && !ctx.condition(available.as_str()).unwrap_or(false)
            {
                return Err(ActionError::new(
                    "situational-unavailable",
                    format!("situational `{qualified}` isn't available"),
                )
                .with("situational", qualified));
            }
            selected.push(qualified.to_owned());
        }
        if !values.iter().any(|(l, _)| *l == local) {
            values.push((local, value));
        }
    }
    Ok(Situational {
        values: Value::map(values),
        selected,
        by_id,
    })
}

/// The app's situational JSON as values.
pub fn situational_json(given: &Map<String, Json>) -> Vec<(String, Value)> {
    given
        .iter()
        .map(|(k, v)| (k.clone(), Value::from_json(v).unwrap_or_default()))
        .collect()
}
