//! Behaviour of loading seen from outside: the homebrew cache equals a fresh load, and malformed
//! releases give errors, never a panic or a hang.

use ocf_load::{HomebrewCache, LoadOptions, load_homebrew, load_ruleset};
use ocf_model::{Character, PackRelease};
use proptest::prelude::*;
use serde_json::{Value, json};

fn core() -> Value {
    json!({
        "id": "core", "version": "1.0.0", "specVersion": "1.0.0",
        "rules": {
            "tags": ["damage.fire"],
            "fields": { "hp": { "type": "integer", "default": 3 }, "ac": { "type": "integer", "formula": "10 + hp" } },
            "contentTypes": { "feat": {} },
            "standardCopies": [{ "type": "feat", "where": "'damage' in item.tags" }]
        },
        "content": [
            { "id": "a", "type": "feat", "tags": ["damage", "damage.fire"] },
            { "id": "b", "extends": "a", "tags": [] },
            { "id": "c", "type": "feat", "hides": ["b"], "grants": [{ "item": "a", "when": "self.equipped" }] }
        ]
    })
}

fn release(json: Value) -> PackRelease {
    serde_json::from_value(json).unwrap()
}

fn character(homebrew: Value) -> Character {
    serde_json::from_value(json!({
        "id": "c1", "specVersion": "1.0.0", "packs": [{ "id": "core", "version": "1.0.0" }],
        "homebrew": homebrew
    }))
    .unwrap()
}

#[test]
fn homebrew_cache_equals_a_fresh_load() {
    let ruleset = load_ruleset(&[release(core())], &LoadOptions::default()).unwrap();
    let mut cache = HomebrewCache::new();
    let first =
        character(json!({ "content": [{ "id": "mine", "type": "feat", "tags": ["damage"] }] }));
    let second = character(json!({ "content": [{ "id": "other", "type": "feat" }] }));
    for c in [&first, &first, &second, &first] {
        let cached = cache.load(&ruleset, c);
        assert_eq!(cached, load_homebrew(&ruleset, c));
    }
    // The homebrew item joins the re-resolved content-only query.
    let layered = cache.load(&ruleset, &first).unwrap();
    assert_eq!(
        layered.query_result("core:feat", Some("'damage' in item.tags")),
        Some(&["core:a".to_owned(), "homebrew:mine".to_owned()][..])
    );
}

/// Mutations of a valid release: keys dropped, values of the wrong type, huge strings, `extends`
/// cycles and long chains.
fn mutate(mut value: Value, ops: &[(u8, u16)]) -> Value {
    for &(op, pick) in ops {
        let mut paths = Vec::new();
        collect_paths(&value, String::new(), &mut paths);
        if paths.is_empty() {
            break;
        }
        let path = paths[pick as usize % paths.len()].clone();
        let Some(target) = value.pointer_mut(&path) else {
            continue;
        };
        *target = match op % 6 {
            0 => Value::Null,
            1 => json!(42),
            2 => json!("x".repeat(100_000)),
            3 => json!(["a", { "b": [] }]),
            4 => json!({ "unexpected": true }),
            _ => json!("a"),
        };
    }
    value
}

fn collect_paths(value: &Value, at: String, out: &mut Vec<String>) {
    out.push(at.clone());
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                collect_paths(
                    v,
                    format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")),
                    out,
                );
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                collect_paths(v, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn mutated_releases_never_panic(ops in prop::collection::vec((any::<u8>(), any::<u16>()), 1..4)) {
        let mutated = mutate(core(), &ops);
        // A release that no longer reads is the reader's error; one that reads must load or fail.
        if let Ok(release) = serde_json::from_value::<PackRelease>(mutated) {
            let _ = load_ruleset(&[release], &LoadOptions::default());
        }
    }

    #[test]
    fn extends_graphs_end(edges in prop::collection::vec((0usize..40, 0usize..40), 0..60)) {
        let mut content = vec![json!({ "id": "i0", "type": "feat" })];
        for i in 1..40 {
            let parent = edges.iter().find(|(from, _)| *from == i).map(|(_, to)| *to);
            content.push(match parent {
                Some(p) => json!({ "id": format!("i{i}"), "extends": format!("i{p}") }),
                None => json!({ "id": format!("i{i}"), "extends": format!("i{}", i - 1) }),
            });
        }
        let mut pack = core();
        pack["content"] = Value::Array(content);
        let result = load_ruleset(&[release(pack)], &LoadOptions::default());
        if let Err(errors) = result {
            prop_assert!(errors.iter().all(|e| matches!(
                e.code.as_str(),
                "circular-extends" | "safety-limit-exceeded" | "unknown-reference"
            )), "{errors:?}");
        }
    }
}
