//! Our own documents using every part of the format (testdata/model) load as formats.md describes.

use std::fs;
use std::path::{Path, PathBuf};

use ocf_model::{
    Character, ChoiceOptions, ChoiceSource, ContentFile, EffectValue, Formula, Literal,
    PackManifest, PackRelease, PickCount, RulesDocument, StateDecl, from_json_str, from_yaml_str,
};

fn fixture(path: &str) -> (String, String) {
    let full: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/model")
        .join(path);
    (path.to_owned(), fs::read_to_string(full).unwrap())
}

fn load<T: serde::de::DeserializeOwned>(path: &str) -> T {
    let (name, text) = fixture(path);
    from_yaml_str(&text, &name).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn pack_source_folder_loads_into_a_release() {
    let manifest: PackManifest = load("pack/pack.yaml");
    let fields: RulesDocument = load("pack/rules/fields.yaml");
    let rules: RulesDocument = load("pack/rules/rules.yaml");
    let fighter: ContentFile = load("pack/content/classes/fighter.yaml");
    let runic: ContentFile = load("pack/content/templates/runic.yaml");

    // Dependencies keep their written order: references resolve nearest first.
    let deps: Vec<_> = manifest
        .dependencies
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    assert_eq!(deps, ["core-rules ^1.0.0", "demo-extras >=0.3.0 <0.5.0"]);

    // Fields keep the written order ("ruleset field order"); numbers written as YAML numbers stay
    // formula text, a whole decimal keeps its point.
    let ids: Vec<_> = fields.fields.iter().map(|(id, _)| id).collect();
    assert_eq!(
        ids[..3],
        ["abilities.str.score", "abilities.str.mod", "hp.max"]
    );
    assert_eq!(
        fields.fields.get("combat.ac").unwrap().formula,
        Some(Formula::from("10"))
    );
    assert_eq!(
        fields.fields.get("speed").unwrap().formula,
        Some(Formula::from("2.0"))
    );

    // A state default may be a literal or `{ formula }`.
    let class = rules.content_types.get("class").unwrap();
    let level: &StateDecl = class.state.get("level").unwrap();
    assert_eq!(
        serde_json::to_string(&level.default).unwrap(),
        r#"{"formula":"1"}"#
    );

    let fighter = fighter.into_items();
    assert_eq!(fighter.len(), 1);
    let choices = &fighter[0].choices;
    assert!(matches!(choices[0].pick, Some(PickCount::Exactly(ref n)) if n.as_str() == "2"));
    assert!(matches!(
        choices[0].options,
        ChoiceOptions::Source(ChoiceSource::Values { .. })
    ));
    assert!(matches!(choices[1].pick, Some(PickCount::Range { .. })));
    assert!(matches!(choices[1].options, ChoiceOptions::Inline(ref options) if options.len() == 2));
    assert!(matches!(
        rules.situational.get("advantage").unwrap().effects[0].value,
        Some(EffectValue::RollModifier(_))
    ));

    // A template's `null` removes a field: it is kept as null, not dropped.
    let runic = runic.into_items();
    assert_eq!(runic.len(), 3);
    assert_eq!(runic[0].fields.get("damageType"), Some(&Literal::Null));
    assert_eq!(runic[2].id, None);
    assert_eq!(
        runic[2].r#override.as_ref().unwrap().as_str(),
        "core-rules:weapons.club"
    );

    // The build's output: one JSON document. It reads back to the same release.
    let mut merged = rules;
    merged.fields = fields.fields;
    merged.tags = fields.tags;
    merged.settings = fields.settings;
    merged.template_fields = fields.template_fields;
    let release = PackRelease {
        id: manifest.id,
        version: manifest.version,
        spec_version: manifest.spec_version,
        dependencies: manifest.dependencies,
        rules: merged,
        content: fighter.into_iter().chain(runic).collect(),
        default_locale: manifest.default_locale,
        texts: Default::default(),
    };
    let json = serde_json::to_string(&release).unwrap();
    let again: PackRelease = from_json_str(&json, "release.json").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(again, release);
}

#[test]
fn character_file_loads() {
    let character: Character = load("character.yaml");
    let pins: Vec<_> = character
        .packs
        .iter()
        .map(|pin| format!("{}@{}", pin.id, pin.version))
        .collect();
    assert_eq!(pins, ["core-rules@1.4.2", "demo-1e@1.2.0"]);
    let json = serde_json::to_string_pretty(&character).unwrap();
    expect_test::expect![[r#"
        {
          "id": "aria",
          "specVersion": "1.0.0",
          "packs": [
            {
              "id": "core-rules",
              "version": "1.4.2"
            },
            {
              "id": "demo-1e",
              "version": "1.2.0"
            }
          ],
          "creating": false,
          "values": {
            "demo-1e:abilities.str.score": 16,
            "demo-1e:hp.current": 9,
            "demo-1e:skills.custom.name": "Sailing"
          },
          "features": [
            {
              "id": "demo-1e-classes-fighter",
              "item": "demo-1e:classes.fighter",
              "state": {
                "level": 5,
                "hitDiceSpent": 1
              },
              "choices": {
                "skills": [
                  {
                    "option": "athletics"
                  },
                  {
                    "option": "intimidation"
                  }
                ],
                "style": [
                  {
                    "option": "dueling",
                    "choices": {
                      "weapon": [
                        {
                          "option": "demo-1e:weapons.rune-sword"
                        }
                      ]
                    }
                  }
                ],
                "feats-1": [
                  {
                    "option": "tough"
                  }
                ],
                "features.second-wind/heal-style": [
                  {
                    "option": "quick"
                  }
                ]
              }
            }
          ],
          "inventory": [
            {
              "id": "sword",
              "item": "demo-1e:weapons.rune-sword",
              "equipped": true,
              "state": {
                "nickname": "Ember"
              },
              "templates": [
                "demo-1e:templates.runic"
              ]
            },
            {
              "id": "arrows",
              "item": "core-rules:ammo.arrows",
              "quantity": 20
            }
          ],
          "applied": [
            {
              "id": "poisoned-1",
              "source": "core-rules:conditions.poisoned",
              "state": {
                "by": "goblin"
              }
            },
            {
              "id": "bless-1",
              "source": "core-rules:spells.bless",
              "active": false
            }
          ],
          "choices": {
            "demo-1e:background": [
              {
                "option": "demo-1e:backgrounds.sailor"
              }
            ]
          },
          "competing": [
            "demo-1e:classes.fighter#0"
          ],
          "links": {
            "demo-1e:crew": "crew-of-the-gull"
          },
          "followUps": [
            {
              "id": "blood-magic-1",
              "followUp": "demo-1e:features.blood-magic#blood-magic",
              "source": "demo-1e:features.blood-magic",
              "params": {
                "rank": 3
              }
            }
          ],
          "homebrew": {
            "content": [
              {
                "id": "feats.lucky",
                "type": "feat",
                "effects": [
                  {
                    "target": "luck",
                    "op": "add",
                    "value": "1"
                  }
                ]
              }
            ],
            "rules": {
              "fields": {
                "luck": {
                  "type": "integer",
                  "input": true,
                  "default": 0
                }
              }
            }
          },
          "extensions": {
            "my-vtt": {
              "token": "aria.png",
              "layer": 2
            }
          }
        }"#]]
    .assert_eq(&json);
    let again: Character = from_json_str(&json, "character.json").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(again, character);
}
