//! The committed JSON Schemas (docs/schemas/) are what the serde types generate: regenerate them with
//! `UPDATE_EXPECT=1 cargo test -p ocf-cli --test schemas`.

use expect_test::expect_file;
use ocf_cli::schema::{SCHEMAS, schema};

#[test]
fn committed_schemas_are_up_to_date() {
    let files = [
        (
            "manifest",
            expect_file!["../../../docs/schemas/manifest.schema.json"],
        ),
        (
            "rules",
            expect_file!["../../../docs/schemas/rules.schema.json"],
        ),
        (
            "content",
            expect_file!["../../../docs/schemas/content.schema.json"],
        ),
        (
            "pack",
            expect_file!["../../../docs/schemas/pack.schema.json"],
        ),
        (
            "character",
            expect_file!["../../../docs/schemas/character.schema.json"],
        ),
        (
            "texts",
            expect_file!["../../../docs/schemas/texts.schema.json"],
        ),
        (
            "ruleset",
            expect_file!["../../../docs/schemas/ruleset.schema.json"],
        ),
    ];
    assert_eq!(
        files.iter().map(|(name, _)| *name).collect::<Vec<_>>(),
        SCHEMAS.iter().map(|(name, _)| *name).collect::<Vec<_>>(),
        "every schema has a committed file"
    );
    for (name, file) in files {
        file.assert_eq(&schema(name).unwrap());
    }
}

/// Unknown keys are refused in the schema as in reading: an editor flags a typo as the build does.
#[test]
fn schemas_refuse_unknown_keys_like_the_reader() {
    let content: serde_json::Value = serde_json::from_str(&schema("content").unwrap()).unwrap();
    let defs = &content["$defs"];
    for name in [
        "ContentItem",
        "Effect",
        "Step",
        "Change",
        "Choice",
        "Action",
    ] {
        assert_eq!(defs[name]["additionalProperties"], false, "{name}");
    }
    assert_eq!(
        defs["Formula"]["type"],
        serde_json::json!(["string", "number", "boolean"])
    );
}

/// The ruleset schema describes what loading writes: every top-level key of a loaded sample pack is
/// a property of the schema, and every declaration wrapper carries `declaredIn`.
#[test]
fn ruleset_schema_covers_a_loaded_ruleset() {
    let schema: serde_json::Value = serde_json::from_str(&schema("ruleset").unwrap()).unwrap();
    assert_eq!(schema["additionalProperties"], false);
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/packs");
    let releases: Vec<_> = ["5e-srd-5.1", "fitd-scoundrel"]
        .iter()
        .map(|pack| ocf_load::source::read_pack(&dir.join(pack)).unwrap())
        .collect();
    for release in releases {
        let ruleset = ocf_load::load_ruleset(&[release], &Default::default()).unwrap();
        let json = serde_json::to_value(&ruleset).unwrap();
        for key in json.as_object().unwrap().keys() {
            assert!(
                schema["properties"].get(key).is_some(),
                "`{key}` is not in the ruleset schema"
            );
        }
    }
    for (name, def) in schema["$defs"].as_object().unwrap() {
        if name.starts_with("Declared_") {
            assert!(def["properties"].get("declaredIn").is_some(), "{name}");
        }
    }
}

/// An `applyEffect`'s state value is a formula or `{ formula }` (EA "Other steps": a state value
/// reading `batch` "is passed on as `{ formula }`"), in the schema as in reading.
#[test]
fn apply_effect_state_takes_a_wrapped_formula() {
    for name in ["content", "character"] {
        let schema: serde_json::Value = serde_json::from_str(&schema(name).unwrap()).unwrap();
        let defs = &schema["$defs"];
        let value = &defs["Change"]["properties"]["state"]["additionalProperties"]["$ref"];
        let def = value
            .as_str()
            .and_then(|r| r.strip_prefix("#/$defs/"))
            .map(|d| &defs[d])
            .unwrap_or_else(|| panic!("{name}: a state value is a reference, not {value}"));
        let shapes = def["anyOf"].as_array().expect("a formula or `{ formula }`");
        assert!(
            shapes.iter().any(|s| s["$ref"] == "#/$defs/Formula"),
            "{name}: {def}"
        );
        assert!(
            shapes
                .iter()
                .any(|s| s["properties"]["formula"]["$ref"] == "#/$defs/Formula"
                    && s["required"] == serde_json::json!(["formula"])),
            "{name}: {def}"
        );
    }
}
