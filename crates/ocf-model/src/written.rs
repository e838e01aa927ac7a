//! Lists written empty. EC: in `extends` and `override`, "arrays (`tags`, `effects`, `choices`, …)
//! replaced whole", so a child's `effects: []` replaces its parent's effects. Serde's `default` and
//! `skip_serializing_if = "Vec::is_empty"` make an empty list and a missing one the same value, and the
//! merge (which works on the items' JSON) would keep the parent's.
//!
//! [`written_struct!`] declares a struct that remembers which of its lists were written empty: serde
//! reads a private twin whose lists are options, and the struct writes a list back when it has members
//! or was written empty, so the fact survives a built release and the merge.

use serde::{Deserialize, Deserializer};

use crate::Keyed;

/// The lists of a struct that were written empty, by Rust field name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EmptyLists(Vec<&'static str>);

impl EmptyLists {
    pub fn contains(&self, field: &str) -> bool {
        self.0.contains(&field)
    }

    pub fn insert(&mut self, field: &'static str) {
        if !self.contains(field) {
            self.0.push(field);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// A list as read: `None` when not written, so `[]` is told apart.
pub struct WrittenList<T>(Option<Vec<T>>);

impl<T> Default for WrittenList<T> {
    fn default() -> Self {
        WrittenList(None)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for WrittenList<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Vec::deserialize(deserializer).map(|list| WrittenList(Some(list)))
    }
}

/// How a field of a [`written_struct!`] is read and whether it is written back.
pub trait Written: Sized {
    /// What serde reads.
    type Raw;
    fn from_raw(raw: Self::Raw, field: &'static str, empty: &mut EmptyLists) -> Self;
    fn is_written(&self, field: &str, empty: &EmptyLists) -> bool;
}

impl<T> Written for Vec<T> {
    type Raw = WrittenList<T>;

    fn from_raw(raw: WrittenList<T>, field: &'static str, empty: &mut EmptyLists) -> Self {
        match raw.0 {
            Some(list) => {
                if list.is_empty() {
                    empty.insert(field);
                }
                list
            }
            None => Vec::new(),
        }
    }

    fn is_written(&self, field: &str, empty: &EmptyLists) -> bool {
        !self.is_empty() || empty.contains(field)
    }
}

impl<T> Written for Option<T> {
    type Raw = Option<T>;

    fn from_raw(raw: Option<T>, _: &'static str, _: &mut EmptyLists) -> Self {
        raw
    }

    fn is_written(&self, _: &str, _: &EmptyLists) -> bool {
        self.is_some()
    }
}

/// Maps merge key by key, so an empty one changes nothing and need not be told apart.
impl<T> Written for Keyed<T> {
    type Raw = Keyed<T>;

    fn from_raw(raw: Keyed<T>, _: &'static str, _: &mut EmptyLists) -> Self {
        raw
    }

    fn is_written(&self, _: &str, _: &EmptyLists) -> bool {
        !self.is_empty()
    }
}

/// Declares a struct whose lists remember being written empty (`written_empty`). Every field is
/// optional (`#[serde(default)]`), a list, an option or a keyed map; keys are camelCase.
macro_rules! written_struct {
    (
        $(#[$meta:meta])*
        pub struct $name:ident read as $raw:ident {
            $( $(#[$fmeta:meta])* pub $field:ident : $fty:ty, )*
        }
    ) => {
        $(#[$meta])*
        pub struct $name {
            $( $(#[$fmeta])* pub $field: $fty, )*
            /// The lists written empty (`effects: []`), which `extends` and `override` replace with
            /// nothing rather than keep the parent's.
            #[serde(skip)]
            pub written_empty: $crate::written::EmptyLists,
        }

        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase", deny_unknown_fields)]
        struct $raw {
            $( $(#[$fmeta])* $field: <$fty as $crate::written::Written>::Raw, )*
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                use $crate::written::Written as _;
                let raw = $raw::deserialize(deserializer)?;
                let mut written_empty = $crate::written::EmptyLists::default();
                Ok($name {
                    $( $field: <$fty>::from_raw(raw.$field, stringify!($field), &mut written_empty), )*
                    written_empty,
                })
            }
        }

        impl Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                use serde::ser::SerializeMap as _;
                use $crate::written::Written as _;
                // The keys, camelCase, worked out once: loading serialises every release.
                static KEYS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
                let keys = KEYS.get_or_init(|| {
                    vec![$($crate::checked::key_name(stringify!($field))),*]
                });
                let mut keys = keys.iter();
                let mut map = serializer.serialize_map(None)?;
                $(
                    let key = keys.next().expect("one key per field");
                    if self.$field.is_written(stringify!($field), &self.written_empty) {
                        map.serialize_entry(key, &self.$field)?;
                    }
                )*
                map.end()
            }
        }
    };
}

pub(crate) use written_struct;

#[cfg(test)]
mod tests {
    use crate::ContentItem;

    /// A list written empty is written back (a built release keeps it); one not written is not.
    #[test]
    fn a_list_written_empty_survives_a_round_trip() {
        let item: ContentItem =
            serde_json::from_str(r#"{ "id": "drow", "extends": "elf", "effects": [] }"#).unwrap();
        assert!(item.effects.is_empty());
        let json = serde_json::to_value(&item).unwrap();
        assert_eq!(
            json,
            serde_json::json!({ "id": "drow", "extends": "elf", "effects": [] })
        );
        let back: ContentItem = serde_json::from_value(json).unwrap();
        assert_eq!(back, item);
        let plain: ContentItem = serde_json::from_str(r#"{ "id": "elf" }"#).unwrap();
        assert_eq!(
            serde_json::to_value(&plain).unwrap(),
            serde_json::json!({ "id": "elf" })
        );
    }
}
