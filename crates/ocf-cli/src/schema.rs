//! `ocf schema NAME`: JSON Schemas of the documents, generated from ocf-model's serde types so they
//! can't drift from what the engine reads. Editors use them to check YAML as authors type
//! (docs/schemas/README.md). The same schemas are committed under docs/schemas/.

use ocf_model::{Character, ContentFile, PackManifest, PackRelease, RulesDocument, Ruleset};
use schemars::JsonSchema;
use schemars::generate::SchemaSettings;

/// The schemas by name, and what each covers.
pub const SCHEMAS: &[(&str, &str)] = &[
    ("manifest", "a pack source folder's pack.yaml"),
    (
        "rules",
        "a rules document (rules/**/*.yaml), and a homebrew's rules",
    ),
    (
        "content",
        "a content file (content/**/*.yaml): one item or a list of items",
    ),
    (
        "pack",
        "a pack release, what `ocf build` writes and loadRuleset takes",
    ),
    ("character", "a character file"),
    (
        "texts",
        "a translation file (i18n/<locale>.yaml, i18n/<locale>/**/*.yaml)",
    ),
    (
        "ruleset",
        "a loaded ruleset, what loadRuleset gives and every other call takes",
    ),
];

/// The schema called `name`, as pretty JSON with a final newline.
pub fn schema(name: &str) -> Option<String> {
    let mut value = match name {
        "manifest" => generate::<PackManifest>(),
        "rules" => generate::<RulesDocument>(),
        "content" => generate::<ContentFile>(),
        "pack" => generate::<PackRelease>(),
        "character" => generate::<Character>(),
        "texts" => generate::<ocf_model::text::TranslationFileSchema>(),
        "ruleset" => generate::<Ruleset>(),
        _ => return None,
    };
    if let Some(object) = value.as_object_mut() {
        object.insert(
            "$id".to_owned(),
            format!("https://github.com/ocf-engine/ocf/docs/schemas/{name}.schema.json").into(),
        );
    }
    Some(serde_json::to_string_pretty(&value).expect("a schema serializes") + "\n")
}

fn generate<T: JsonSchema>() -> serde_json::Value {
    let generator = SchemaSettings::draft2020_12().into_generator();
    generator.into_root_schema_for::<T>().to_value()
}
