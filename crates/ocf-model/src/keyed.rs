//! [`Keyed`]: an ordered map that keeps the written order (fields are computed in "ruleset field order")
//! and rejects a key written twice, which a plain map would silently let the later one win.

use std::fmt;
use std::marker::PhantomData;

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};

/// The map under [`Keyed`]. Every field and content lookup of a sheet goes through one, so it is
/// hashed with foldhash, several times faster than the standard SipHash on short IDs; its keys
/// come from untrusted packs, so the hash is randomly seeded (which rustc-hash's Fx is not: keys
/// can be written to collide under it and make each lookup a scan).
pub type KeyedMap<V> = IndexMap<String, V, foldhash::fast::RandomState>;

/// Declarations or values keyed by ID or name, in written order.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(transparent)]
pub struct Keyed<V>(pub KeyedMap<V>);

impl<V> Default for Keyed<V> {
    fn default() -> Self {
        Self(KeyedMap::default())
    }
}

impl<V> Keyed<V> {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn get(&self, key: &str) -> Option<&V> {
        self.0.get(key)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &V)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v))
    }
}

impl<'de, V: Deserialize<'de>> Deserialize<'de> for Keyed<V> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyedVisitor<V>(PhantomData<V>);

        impl<'de, V: Deserialize<'de>> Visitor<'de> for KeyedVisitor<V> {
            type Value = Keyed<V>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut entries = KeyedMap::default();
                while let Some(key) = map.next_key::<String>()? {
                    if entries.contains_key(&key) {
                        return Err(de::Error::custom(format_args!("duplicate key `{key}`")));
                    }
                    let value = map.next_value()?;
                    entries.insert(key, value);
                }
                Ok(Keyed(entries))
            }
        }

        deserializer.deserialize_map(KeyedVisitor(PhantomData))
    }
}

/// A map of `V` by key; the schema can't say that a key is written once (YAML and JSON parsers take the
/// last), which reading checks.
impl<V: JsonSchema> JsonSchema for Keyed<V> {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> std::borrow::Cow<'static, str> {
        format!("Keyed_{}", V::schema_name()).into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "object",
            "additionalProperties": generator.subschema_for::<V>(),
        })
    }
}
