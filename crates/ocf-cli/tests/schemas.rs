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
