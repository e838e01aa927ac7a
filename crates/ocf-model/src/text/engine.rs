//! The engine's own English texts (`en.yaml` beside this file): the last fallback of the engine's
//! keys, in every locale.

use std::sync::OnceLock;

use crate::Keyed;

static ENGINE: OnceLock<Keyed<String>> = OnceLock::new();

/// The engine's texts by key (`errors.<code>`, `issues.<code>`, `pauses.<kind>`, `compare.<code>`).
pub fn engine_texts() -> &'static Keyed<String> {
    ENGINE.get_or_init(|| {
        serde_yaml::from_str(include_str!("en.yaml")).expect("the engine's texts are a flat map")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::Message;

    #[test]
    fn every_engine_text_parses_and_is_an_engine_key() {
        for (key, text) in engine_texts().iter() {
            Message::parse(text).unwrap_or_else(|e| panic!("{key}: {e:?}"));
            let root = key.split('.').next().unwrap();
            assert!(crate::text::ENGINE_ROOTS.contains(&root), "{key}");
        }
        assert_eq!(engine_texts().get("compare.lt").unwrap(), "below {value}");
    }
}
