//! Classifying a roll (EA "Rolling", the step's result; "Classifying an earlier roll again"): the
//! result's members, the tallies, and the first band of the step's set whose `when` holds.

use ocf_formula::bounded::BoundedTable;
use ocf_formula::value::shared;
use ocf_formula::{Root, Value};
use ocf_model::{Action, BandSet, Declared, Namespace, Op, Results, Ruleset};

use super::build::Built;
use super::rolling::Rolled;
use crate::context::{ActionContext, set_member};
use crate::error::ActionError;
use crate::run::Frame;

/// The band set `id` names, from `pack`: its qualified ID and declaration.
pub fn band_set<'r>(
    ruleset: &'r Ruleset,
    pack: &str,
    id: &str,
) -> Option<(String, &'r Declared<BandSet>)> {
    let qualified = ruleset
        .resolve(pack, id, Namespace::Bands)
        .unwrap_or_else(|| id.to_owned());
    ruleset.bands.get(&qualified).map(|s| (qualified, s))
}

/// Each declared tally visible from `pack`, summed from the roll's tally effects.
pub fn tallies(ruleset: &Ruleset, built: &Built<'_>) -> Vec<(String, i64)> {
    let mut names: Vec<String> = Vec::new();
    for (_, list) in ruleset.roll_tallies.iter() {
        for n in list {
            if !names.contains(n) {
                names.push(n.clone());
            }
        }
    }
    names
        .into_iter()
        .map(|name| {
            let of = |op: Op| {
                built
                    .tallies
                    .iter()
                    .filter(|(n, o, _)| *n == name && *o == op)
                    .map(|(_, _, v)| *v)
                    .collect::<Vec<i64>>()
                    .into_iter()
            };
            let mut v: i64 = of(Op::Add).sum();
            if let Some(least) = of(Op::AtLeast).max() {
                v = v.max(least);
            }
            if let Some(most) = of(Op::AtMost).min() {
                v = v.min(most);
            }
            (name.clone(), v)
        })
        .collect()
}

/// A map value's members, inserted as they are made.
struct Members(ocf_formula::value::Map);

impl Default for Members {
    /// Room for a roll item's usual members (kind, count, sides, modifiers, faces, value, source,
    /// tags).
    fn default() -> Members {
        Members(ocf_formula::value::Map::with_capacity(8))
    }
}

impl Members {
    fn push(&mut self, (name, value): (&str, Value)) {
        self.0.insert(ocf_formula::value::key(name), value);
    }

    fn value(self) -> Value {
        Value::Map(std::sync::Arc::new(self.0))
    }
}

/// The result value of a rolled roll, without its band: its items as their JSON reads
/// ([`item_value`]), made without going through JSON.
pub fn result_value(rolled: &Rolled, empty: bool) -> Value {
    let mut faces = Vec::new();
    let mut kept = Vec::new();
    for item in &rolled.items {
        for f in item.faces.iter().flatten() {
            faces.push(Value::Int(f.value));
            if f.kept {
                kept.push(Value::Int(f.value));
            }
        }
    }
    let tallies = Value::map(
        rolled
            .tallies
            .iter()
            .map(|(n, v)| (n.as_str(), Value::Int(*v))),
    );
    let bounds = rolled
        .bounds
        .iter()
        .map(|b| Value::from_json(b).unwrap_or_default())
        .collect();
    Value::map([
        ("total", Value::Int(rolled.total)),
        ("faces", Value::list(faces)),
        ("kept", Value::list(kept)),
        ("empty", Value::Bool(empty)),
        (
            "items",
            Value::list(rolled.items.iter().map(item_value).collect()),
        ),
        ("tallies", tallies),
        ("bounds", Value::list(bounds)),
        ("unbounded", Value::Int(rolled.unbounded)),
    ])
}

/// A roll item as a formula reads it: the value of its JSON (DA "Roll items"), made directly.
/// The members rolls seldom have (modifiers, dropped instances, replaced items, a factor) go
/// through their JSON.
pub fn item_value(item: &ocf_dice::RollItem) -> Value {
    let via_json = |json: serde_json::Result<serde_json::Value>| {
        json.ok()
            .and_then(|j| Value::from_json(&j).ok())
            .unwrap_or_default()
    };
    // Members inserted as they are made (no gathering vector).
    let mut m = Members::default();
    let kind = match item.kind {
        ocf_dice::ItemKind::Dice => "dice",
        ocf_dice::ItemKind::Flat => "flat",
    };
    m.push(("kind", Value::String(shared(kind))));
    if let Some(count) = item.count {
        m.push(("count", Value::Int(count.into())));
    }
    if let Some(sides) = item.sides {
        m.push((
            "sides",
            match sides {
                ocf_dice::Sides::Number(n) => Value::Int(n.into()),
                ocf_dice::Sides::Fate => Value::string("F"),
            },
        ));
    }
    if let Some(mods) = &item.modifiers {
        let mods = match mods.is_empty() {
            true => Value::list(Vec::new()),
            false => via_json(serde_json::to_value(mods)),
        };
        m.push(("modifiers", mods));
    }
    if let Some(faces) = &item.faces {
        m.push(("faces", Value::list(faces.iter().map(face_value).collect())));
    }
    m.push(("value", Value::Int(item.value)));
    if let Some(source) = &item.source {
        m.push(("source", source_value(source)));
    }
    if let Some(tags) = &item.tags {
        m.push((
            "tags",
            Value::list(tags.iter().map(|t| Value::String(t.clone())).collect()),
        ));
    }
    if let Some(multiplied) = item.multiplied {
        m.push(("multiplied", Value::Bool(multiplied)));
    }
    if let Some(factor) = item.factor {
        m.push(("factor", via_json(serde_json::to_value(factor))));
    }
    if let Some(dropped) = &item.dropped {
        m.push(("dropped", via_json(serde_json::to_value(dropped))));
    }
    if let Some(replaces) = &item.replaces {
        m.push(("replaces", via_json(serde_json::to_value(replaces))));
    }
    if let Some(from) = item.stepped_from {
        m.push(("steppedFrom", Value::Int(from.into())));
    }
    m.value()
}

/// An item's or face's `source` as a formula reads it (`{ type, id }`), made once per source: the
/// sources are the rulesets' content and fields, a few per roll and the same in every roll. Past
/// [`SHARED_SOURCES`] a source is made anew each time.
fn source_value(source: &ocf_dice::item::ItemSource) -> Value {
    static SOURCES: BoundedTable<ocf_dice::item::ItemSource, Value> =
        BoundedTable::new(SHARED_SOURCES);
    SOURCES.get_or_make(source, || {
        let kind = ("type", Value::String(source.kind.clone()));
        let made = match &source.id {
            Some(id) => Value::map([kind, ("id", Value::String(id.clone()))]),
            None => Value::map([kind]),
        };
        (source.clone(), made)
    })
}

/// How many sources [`source_value`] keeps.
const SHARED_SOURCES: usize = 1 << 12;

/// The faces most rolls have, `{ value, kept }` for 0 to [`SHARED_FACES`], each made the first
/// time it is rolled.
const SHARED_FACES: i64 = 100;

fn face_value(face: &ocf_dice::Face) -> Value {
    static SHARED: [std::sync::OnceLock<Value>; 2 * (SHARED_FACES as usize + 1)] =
        [const { std::sync::OnceLock::new() }; 2 * (SHARED_FACES as usize + 1)];
    let plain = !face.rerolled && !face.exploded && !face.set && face.source.is_none();
    if plain && (0..=SHARED_FACES).contains(&face.value) {
        return SHARED[(face.value * 2) as usize + usize::from(face.kept)]
            .get_or_init(|| {
                Value::map([
                    ("value", Value::Int(face.value)),
                    ("kept", Value::Bool(face.kept)),
                ])
            })
            .clone();
    }
    let mut m = Members::default();
    m.push(("value", Value::Int(face.value)));
    m.push(("kept", Value::Bool(face.kept)));
    for (name, on) in [
        ("rerolled", face.rerolled),
        ("exploded", face.exploded),
        ("set", face.set),
    ] {
        if on {
            m.push((name, Value::Bool(true)));
        }
    }
    if let Some(source) = &face.source {
        m.push(("source", source_value(source)));
    }
    m.value()
}

/// Adds `band`, `bandValue` and `bandSet` to `result` by the step's `bands`, in `ctx` (the step's
/// band context) with `roll` bound to the result while the bands are worked out (unbound after).
pub fn classify(
    ruleset: &Ruleset,
    pack: &str,
    bands: Option<&str>,
    ctx: &mut ActionContext<'_>,
    mut result: Value,
) -> Result<Value, ActionError> {
    // A band-less result still drops a stale band (a roll classified again).
    for key in ["band", "bandValue", "bandSet"] {
        if let Value::Map(m) = &mut result {
            std::sync::Arc::make_mut(m).remove(key);
        }
    }
    let Some(id) = bands else {
        return Ok(result);
    };
    let Some((qualified, set)) = band_set(ruleset, pack, id) else {
        return Err(
            ActionError::new("unknown-reference", format!("no band set `{id}`"))
                .with("kind", "bands")
                .with("id", id),
        );
    };
    ctx.bind(Root::Roll, result.clone());
    if let Some(value) = &set.decl.value {
        let v = ctx.eval(value.as_str())?;
        // The context's copy let go first, so the result changes in place.
        ctx.unbind(Root::Roll);
        set_member(&mut result, "value", v.clone());
        set_member(&mut result, "bandValue", v);
        ctx.bind(Root::Roll, result.clone());
    }
    let mut found = None;
    for band in &set.decl.bands {
        if ctx.condition(band.when.as_str())? {
            found = Some(band);
            break;
        }
    }
    ctx.unbind(Root::Roll);
    if let Some(band) = found {
        set_member(&mut result, "band", Value::String(shared(band.id.as_str())));
        set_member(&mut result, "bandSet", Value::String(shared(&qualified)));
    }
    if let Value::Map(m) = &mut result {
        std::sync::Arc::make_mut(m).remove("value");
    }
    Ok(result)
}

/// `undeclared-result`: a result the action's `results` doesn't list.
pub fn check_result(ruleset: &Ruleset, frame: &Frame<'_>, result: &str) -> Result<(), ActionError> {
    if declares_result(ruleset, frame.def, frame.pack, result) {
        Ok(())
    } else {
        Err(ActionError::new(
            "undeclared-result",
            format!("the action doesn't declare `{result}`"),
        )
        .with("result", result))
    }
}

/// Whether `def` (of `pack`) may finish with `result`: any when it declares no `results`.
pub fn declares_result(ruleset: &Ruleset, def: &Action, pack: &str, result: &str) -> bool {
    match &def.results {
        None => true,
        Some(Results::List(list)) => list.iter().any(|r| r == result),
        Some(Results::Bands { bands }) => band_set(ruleset, pack, bands.as_str())
            .is_some_and(|(_, set)| set.decl.bands.iter().any(|b| b.id == result)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A roll item's value made directly is the value of its JSON, for items with every member a
    /// roll item has (`testdata/model/roll-items.json`).
    #[test]
    fn item_values_are_their_json() {
        let items: Vec<ocf_dice::RollItem> =
            serde_json::from_str(include_str!("../../../../testdata/model/roll-items.json"))
                .expect("items");
        for item in &items {
            let json = serde_json::to_value(item).expect("json");
            assert_eq!(
                item_value(item),
                Value::from_json(&json).expect("value"),
                "{json}"
            );
        }
    }
}
