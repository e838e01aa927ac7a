//! Roll items: the spec's PROVISIONAL shape (DA, Roll items; roll-item.schema.json), serialized
//! with its camelCase field names. Fields later steps of a roll fill (`source`, `tags`, `factor`, …)
//! are `None` here and left out of the JSON.

use ocf_syntax::dice::{Compare, CompareOp, Die, Modifier};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A rolled dice value: its items in order and their total.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Roll {
    pub items: Vec<RollItem>,
    pub total: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ItemKind {
    Dice,
    Flat,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RollItem {
    pub kind: ItemKind,
    /// The dice rolled before rerolls and explosions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sides: Option<Sides>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modifiers: Option<Vec<ItemModifier>>,
    /// Every face in the order it was rolled, rerolled and dropped ones included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub faces: Option<Vec<Face>>,
    /// A dice item's value counts with its term's sign.
    pub value: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<ItemSource>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// Shared with the part (or effect) the item comes from: a roll's items carry their part's
    /// tags as they are.
    pub tags: Option<std::sync::Arc<[std::sync::Arc<str>]>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multiplied: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub factor: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dropped: Option<Vec<DroppedInstance>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replaces: Option<Vec<RollItem>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stepped_from: Option<u32>,
}

impl RollItem {
    pub fn flat(value: i64) -> RollItem {
        RollItem {
            kind: ItemKind::Flat,
            count: None,
            sides: None,
            modifiers: None,
            faces: None,
            value,
            source: None,
            tags: None,
            multiplied: None,
            factor: None,
            dropped: None,
            replaces: None,
            stepped_from: None,
        }
    }

    /// The item's JSON, as its `Serialize` writes it, made directly: each object sized for its
    /// members, a plain face's with two. The members few items have (modifiers, dropped
    /// instances, replaced items, a factor) go through `Serialize`.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value as Json;
        let via = |v: serde_json::Result<Json>| v.unwrap_or_default();
        let mut m = serde_json::Map::with_capacity(8);
        let kind = match self.kind {
            ItemKind::Dice => "dice",
            ItemKind::Flat => "flat",
        };
        m.insert("kind".into(), Json::from(kind));
        if let Some(count) = self.count {
            m.insert("count".into(), Json::from(count));
        }
        if let Some(sides) = self.sides {
            let sides = match sides {
                Sides::Number(n) => Json::from(n),
                Sides::Fate => Json::from("F"),
            };
            m.insert("sides".into(), sides);
        }
        if let Some(mods) = &self.modifiers {
            m.insert("modifiers".into(), via(serde_json::to_value(mods)));
        }
        if let Some(faces) = &self.faces {
            let faces = faces.iter().map(Face::to_json).collect();
            m.insert("faces".into(), Json::Array(faces));
        }
        m.insert("value".into(), Json::from(self.value));
        if let Some(source) = &self.source {
            m.insert("source".into(), source.to_json());
        }
        if let Some(tags) = &self.tags {
            let tags = tags.iter().map(|t| Json::from(&**t)).collect();
            m.insert("tags".into(), Json::Array(tags));
        }
        if let Some(multiplied) = self.multiplied {
            m.insert("multiplied".into(), Json::from(multiplied));
        }
        if let Some(factor) = self.factor {
            m.insert("factor".into(), via(serde_json::to_value(factor)));
        }
        if let Some(dropped) = &self.dropped {
            m.insert("dropped".into(), via(serde_json::to_value(dropped)));
        }
        if let Some(replaces) = &self.replaces {
            m.insert("replaces".into(), via(serde_json::to_value(replaces)));
        }
        if let Some(from) = self.stepped_from {
            m.insert("steppedFrom".into(), Json::from(from));
        }
        Json::Object(m)
    }
}

impl ItemSource {
    /// The source's JSON, as its `Serialize` writes it.
    pub fn to_json(&self) -> serde_json::Value {
        let mut m = serde_json::Map::with_capacity(2);
        m.insert("type".into(), serde_json::Value::from(&*self.kind));
        if let Some(id) = &self.id {
            m.insert("id".into(), serde_json::Value::from(&**id));
        }
        serde_json::Value::Object(m)
    }
}

impl Face {
    /// The face's JSON, as its `Serialize` writes it.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value as Json;
        let plain = !self.rerolled && !self.exploded && !self.set && self.source.is_none();
        let mut m = serde_json::Map::with_capacity(if plain { 2 } else { 6 });
        m.insert("value".into(), Json::from(self.value));
        m.insert("kept".into(), Json::from(self.kept));
        for (name, on) in [
            ("rerolled", self.rerolled),
            ("exploded", self.exploded),
            ("set", self.set),
        ] {
            if on {
                m.insert(name.into(), Json::from(true));
            }
        }
        if let Some(source) = &self.source {
            m.insert("source".into(), source.to_json());
        }
        Json::Object(m)
    }
}

/// `{ type, id }`: where an item comes from (`field`, `item`, `effect`, …). Its strings are shared:
/// one source is copied into every item, face and dropped instance it gives.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ItemSource {
    #[serde(rename = "type")]
    pub kind: std::sync::Arc<str>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<std::sync::Arc<str>>,
}

/// A carried field instance that stopped counting (EA, Building the roll, step 2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DroppedInstance {
    pub source: ItemSource,
    pub value: i64,
}

/// One die face. `value` is the face as it counts, after `minimum` and `maximum`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Face {
    pub value: i64,
    pub kept: bool,
    /// This face was rerolled: a later face replaces it.
    #[serde(default, skip_serializing_if = "is_false")]
    pub rerolled: bool,
    /// This face exploded: it added the next face of its chain.
    #[serde(default, skip_serializing_if = "is_false")]
    pub exploded: bool,
    /// The face was given (`setFaces`), not rolled.
    #[serde(default, skip_serializing_if = "is_false")]
    pub set: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<ItemSource>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// A dice item's `sides`: a number (`d%` is 100, "same as d100"), or `"F"` for Fate dice, whose
/// faces -1, 0, +1 no side count describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sides {
    Number(u32),
    Fate,
}

impl From<Die> for Sides {
    fn from(die: Die) -> Sides {
        match die {
            Die::Sides(s) => Sides::Number(s),
            Die::Percent => Sides::Number(100),
            Die::Fate => Sides::Fate,
        }
    }
}

impl Serialize for Sides {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Sides::Number(n) => s.serialize_u32(*n),
            Sides::Fate => s.serialize_str("F"),
        }
    }
}

impl<'de> Deserialize<'de> for Sides {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Sides, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Number(u32),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::Number(n) => Ok(Sides::Number(n)),
            Raw::Text(t) if t == "F" => Ok(Sides::Fate),
            Raw::Text(t) => Err(serde::de::Error::custom(format!("unknown sides `{t}`"))),
        }
    }
}

/// A comparison with a face: `{ "compare": "ge", "value": 5 }`, with the roll summary's codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Point {
    pub compare: CompareCode,
    pub value: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum CompareCode {
    Eq,
    Lt,
    Le,
    Gt,
    Ge,
}

impl From<Compare> for Point {
    fn from(c: Compare) -> Point {
        let compare = match c.op {
            CompareOp::Eq => CompareCode::Eq,
            CompareOp::Lt => CompareCode::Lt,
            CompareOp::Le => CompareCode::Le,
            CompareOp::Gt => CompareCode::Gt,
            CompareOp::Ge => CompareCode::Ge,
        };
        Point {
            compare,
            value: c.value,
        }
    }
}

/// A dice item's modifier, `{ "type": "keepHighest", "count": 1 }`. The argument names: `count`
/// for keep and drop (as in the spec's example) and for a reroll's limit (the `reroll` roll
/// modifier's `count`); `at` for a comparison with a face (the `explode` roll modifier's `at`),
/// absent on an explosion at the highest face; `value` for minimum and maximum (as `minimumFace`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum ItemModifier {
    KeepHighest {
        count: u32,
    },
    KeepLowest {
        count: u32,
    },
    DropHighest {
        count: u32,
    },
    DropLowest {
        count: u32,
    },
    Explode {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        at: Option<Point>,
    },
    ExplodeCompound {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        at: Option<Point>,
    },
    Reroll {
        at: Point,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        count: Option<u32>,
    },
    RerollOnce {
        at: Point,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        count: Option<u32>,
    },
    CountSuccesses {
        at: Point,
    },
    CountFailures {
        at: Point,
    },
    Minimum {
        value: i64,
    },
    Maximum {
        value: i64,
    },
}

impl From<&Modifier> for ItemModifier {
    fn from(m: &Modifier) -> ItemModifier {
        match *m {
            Modifier::KeepHighest(count) => ItemModifier::KeepHighest { count },
            Modifier::KeepLowest(count) => ItemModifier::KeepLowest { count },
            Modifier::DropHighest(count) => ItemModifier::DropHighest { count },
            Modifier::DropLowest(count) => ItemModifier::DropLowest { count },
            Modifier::Explode(at) => ItemModifier::Explode {
                at: at.map(Point::from),
            },
            Modifier::ExplodeCompound(at) => ItemModifier::ExplodeCompound {
                at: at.map(Point::from),
            },
            Modifier::Reroll { at, count } => ItemModifier::Reroll {
                at: at.into(),
                count,
            },
            Modifier::RerollOnce { at, count } => ItemModifier::RerollOnce {
                at: at.into(),
                count,
            },
            Modifier::CountSuccesses(at) => ItemModifier::CountSuccesses { at: at.into() },
            Modifier::CountFailures(at) => ItemModifier::CountFailures { at: at.into() },
            Modifier::Minimum(value) => ItemModifier::Minimum { value },
            Modifier::Maximum(value) => ItemModifier::Maximum { value },
        }
    }
}

#[cfg(test)]
mod json_tests {
    use super::*;

    /// An item's JSON made directly is what `Serialize` writes, member order included, for items
    /// with every member a roll item has (`testdata/model/roll-items.json`).
    #[test]
    fn to_json_is_serialize() {
        let items: Vec<RollItem> =
            serde_json::from_str(include_str!("../../../testdata/model/roll-items.json"))
                .expect("items");
        for item in &items {
            let serialized = serde_json::to_value(item).expect("json");
            assert_eq!(
                serde_json::to_string(&item.to_json()).unwrap(),
                serde_json::to_string(&serialized).unwrap()
            );
        }
    }
}
