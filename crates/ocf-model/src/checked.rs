//! Structs that hold the keys of several kinds (a step's, a change's) and check, once read, that each
//! written key belongs to the kind: a misplaced key is as silent a typo as a misspelt one.
//!
//! [`checked_struct!`] declares the public struct and a private twin that serde reads; the public
//! struct's `#[serde(try_from = "…")]` runs the kind's check on the twin's value.

use crate::Keyed;

/// Whether a field was written (an empty list counts as not written).
pub(crate) trait IsSet {
    fn is_set(&self) -> bool;
}

impl<T> IsSet for Option<T> {
    fn is_set(&self) -> bool {
        self.is_some()
    }
}

impl<T> IsSet for Vec<T> {
    fn is_set(&self) -> bool {
        !self.is_empty()
    }
}

impl<T> IsSet for Keyed<T> {
    fn is_set(&self) -> bool {
        !self.is_empty()
    }
}

/// The key a Rust field is written as: `r#type` is `type`, `for_each` is `forEach`.
pub(crate) fn key_name(field: &str) -> String {
    let field = field.strip_prefix("r#").unwrap_or(field);
    let mut out = String::with_capacity(field.len());
    let mut upper = false;
    for c in field.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// "a" or "an" before a word, by its first letter.
pub(crate) fn article(word: &str) -> &'static str {
    if word.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    }
}

/// The first written key of `present` not in `allowed`, as an error message.
pub(crate) fn misplaced(present: &[String], allowed: &[&str], what: &str) -> Result<(), String> {
    match present.iter().find(|key| !allowed.contains(&key.as_str())) {
        Some(key) => Err(format!("key `{key}` does not belong on {what}")),
        None => Ok(()),
    }
}

macro_rules! checked_struct {
    (
        $(#[$meta:meta])*
        pub struct $name:ident read as $raw:ident {
            required { $( $(#[$rmeta:meta])* pub $rfield:ident : $rty:ty, )* }
            optional { $( $(#[$ometa:meta])* pub $ofield:ident : $oty:ty, )* }
        }
    ) => {
        $(#[$meta])*
        pub struct $name {
            $( $(#[$rmeta])* pub $rfield: $rty, )*
            $( $(#[$ometa])* pub $ofield: $oty, )*
        }

        #[derive(Deserialize, schemars::JsonSchema)]
        #[serde(rename_all = "camelCase", deny_unknown_fields)]
        struct $raw {
            $( $(#[$rmeta])* $rfield: $rty, )*
            $( $(#[$ometa])* $ofield: $oty, )*
        }

        impl $raw {
            fn into_public(self) -> $name {
                $name { $( $rfield: self.$rfield, )* $( $ofield: self.$ofield, )* }
            }
        }

        impl $name {
            /// The optional keys written, in declaration order.
            #[allow(dead_code)]
            pub(crate) fn written_keys(&self) -> Vec<String> {
                let mut keys = Vec::new();
                $(
                    if $crate::checked::IsSet::is_set(&self.$ofield) {
                        keys.push($crate::checked::key_name(stringify!($ofield)));
                    }
                )*
                keys
            }
        }
    };
}

pub(crate) use checked_struct;

#[cfg(test)]
mod tests {
    use super::key_name;

    #[test]
    fn key_names() {
        assert_eq!(key_name("r#type"), "type");
        assert_eq!(key_name("for_each"), "forEach");
        assert_eq!(key_name("if_empty"), "ifEmpty");
        assert_eq!(key_name("when"), "when");
    }
}
