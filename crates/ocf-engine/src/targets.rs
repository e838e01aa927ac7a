//! Which of a ruleset's fields an effect of the ruleset can target, found once per ruleset.
//!
//! Every effect instance comes from the ruleset: its rules' effects, its content types' and items'
//! (templates are items), and the effects of its choices and of their inline options, nested at
//! any depth (EC, computeSheet "Effects"). A field none of them can name never has an instance,
//! whatever the character: its value needs no look at the character's effects, and so doesn't
//! depend on them (`has_instances`, [`crate::field`]). The fields that can have some share the
//! effect masks among themselves ([`crate::db::fields_with_instances`]), 8 to a mask.
//!
//! The set is a superset, worked out from what is written, not from who holds what:
//!
//! - `target: <field>` names the field it resolves to in its effect's pack (`<pack>:<name>` of a
//!   pack in scope, or the qualified ID as written), so every field with that qualified ID or
//!   that local name is counted, whichever pack the effect stands in;
//! - `target: { fields: { where } }` can reach any field of its kind (`set` fields for a `grant`,
//!   `integer` and `decimal` ones otherwise, as [`crate::db::matching_fields`] filters them),
//!   so all of them are counted: its `where` may read `pick` and `slot`, and a field with
//!   computed tags is matched on each sheet.
//!
//! Debug builds check each index built against the set ([`Targets::can_have`]).

use ocf_model::{Choice, ChoiceOptions, Effect, FieldType, Op, Ruleset, Target};
use rustc_hash::FxHashMap;

/// How many fields one [`crate::db::fields_with_instances`] mask covers, by their place among the
/// fields an effect can target.
pub const FIELDS_PER_MASK: usize = 8;

/// A field no effect can target.
const NONE: u32 = u32::MAX;

/// The fields an effect can target, each with its place among them (its slot in the masks).
#[derive(Debug, PartialEq, Eq)]
pub struct Targets {
    /// By field place: its place among the targetable fields, or [`NONE`].
    slots: Box<[u32]>,
    /// How many fields are targetable.
    count: usize,
    /// By place among the targetable fields: the field's place among the ruleset's.
    places: Box<[u32]>,
}

impl Targets {
    /// The targetable fields of `ruleset` (the module's comment says which).
    pub fn of(ruleset: &Ruleset) -> Targets {
        let fields = &ruleset.fields.0;
        let mut by_local: FxHashMap<&str, Vec<usize>> = FxHashMap::default();
        for (place, (id, _)) in fields.iter().enumerate() {
            if let Some((_, local)) = id.split_once(':') {
                by_local.entry(local).or_default().push(place);
            }
        }
        let mut marked = vec![false; fields.len()];
        let (mut sets, mut numbers) = (false, false);
        let mut mark = |effect: &Effect| match &effect.target {
            Target::Field(id) => {
                let id = id.as_str();
                if let Some(place) = fields.get_index_of(id) {
                    marked[place] = true;
                }
                for &place in by_local.get(id).into_iter().flatten() {
                    marked[place] = true;
                }
            }
            Target::Fields { .. } if effect.op == Op::Grant => sets = true,
            Target::Fields { .. } => numbers = true,
            _ => {}
        };
        for effect in &ruleset.effects {
            mark(&effect.decl);
        }
        for (_, t) in ruleset.content_types.iter() {
            t.decl.effects.iter().for_each(|e| mark(e));
        }
        // Choices nest in inline options without bound (an untrusted pack's): a stack, not
        // recursion.
        let mut choices: Vec<&Choice> = ruleset.choices.iter().map(|(_, c)| &c.decl).collect();
        for (_, entry) in ruleset.content.iter() {
            entry.item.effects.iter().for_each(|e| mark(e));
            choices.extend(&entry.item.choices);
        }
        while let Some(choice) = choices.pop() {
            choice.effects.iter().for_each(|e| mark(e));
            if let ChoiceOptions::Inline(options) = &choice.options {
                for option in options {
                    option.effects.iter().for_each(|e| mark(e));
                    choices.extend(&option.choices);
                }
            }
        }
        for (place, (_, decl)) in fields.iter().enumerate() {
            marked[place] |= match decl.decl.r#type {
                FieldType::Set => sets,
                FieldType::Integer | FieldType::Decimal => numbers,
                _ => false,
            };
        }
        let mut slots = vec![NONE; fields.len()];
        let mut places = Vec::new();
        for (place, _) in marked.iter().enumerate().filter(|(_, m)| **m) {
            slots[place] = places.len() as u32;
            places.push(place as u32);
        }
        Targets {
            slots: slots.into(),
            count: places.len(),
            places: places.into(),
        }
    }

    /// The `place`th field's slot among the targetable fields; `None` when no effect can target it.
    pub fn slot(&self, place: usize) -> Option<usize> {
        self.slots
            .get(place)
            .filter(|s| **s != NONE)
            .map(|s| *s as usize)
    }

    /// The place among the ruleset's fields of the targetable field in `slot`.
    pub fn place(&self, slot: usize) -> Option<usize> {
        self.places.get(slot).map(|p| *p as usize)
    }

    /// How many fields an effect can target.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Whether the `place`th field can have instances (what debug builds check each index by).
    pub fn can_have(&self, place: usize) -> bool {
        self.slot(place).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::Targets;
    use serde_json::json;

    fn ruleset(release: serde_json::Value) -> ocf_model::Ruleset {
        let release: ocf_model::PackRelease = serde_json::from_value(release).unwrap();
        ocf_load::load_ruleset(&[release], &Default::default()).unwrap()
    }

    /// The targetable fields, by ID.
    fn targetable(ruleset: &ocf_model::Ruleset) -> Vec<&str> {
        let targets = Targets::of(ruleset);
        (0..targets.count())
            .filter_map(|slot| targets.place(slot))
            .filter_map(|place| ruleset.fields.0.get_index(place).map(|(id, _)| id.as_str()))
            .collect()
    }

    #[test]
    fn every_kind_of_effect_names_its_fields_and_no_others() {
        let ruleset = ruleset(json!({
            "id": "core", "version": "1.0.0", "specVersion": "1.0.0",
            "rules": {
                "fields": {
                    "byRules": { "type": "integer" },
                    "byType": { "type": "integer" },
                    "byItem": { "type": "integer" },
                    "byChoice": { "type": "integer" },
                    "byNestedOption": { "type": "integer" },
                    "untouched": { "type": "integer" },
                    "label": { "type": "string" },
                    "langs": { "type": "set" },
                },
                "effects": [{ "target": "byRules", "op": "add", "value": 1 }],
                "contentTypes": {
                    "feature": { "effects": [{ "target": "core:byType", "op": "add", "value": 1 }] },
                },
                "choices": [{
                    "id": "origin",
                    "effects": [{ "target": "byChoice", "op": "add", "value": 1 }],
                    "options": [{ "id": "a", "choices": [{
                        "id": "deeper",
                        "options": [{ "id": "b",
                            "effects": [{ "target": "byNestedOption", "op": "add", "value": 1 }] }],
                    }] }],
                }],
            },
            "content": [{ "id": "charm", "type": "feature",
                "effects": [{ "target": "byItem", "op": "add", "value": 1 }] }],
        }));
        expect_test::expect![[r#"
            [
                "core:byRules",
                "core:byType",
                "core:byItem",
                "core:byChoice",
                "core:byNestedOption",
            ]
        "#]]
        .assert_debug_eq(&targetable(&ruleset));
    }

    /// An effect on a set of fields can reach every field of its kind: numbers for the other
    /// operations, sets for `grant`.
    #[test]
    fn an_effect_on_a_set_of_fields_counts_every_field_of_its_kind() {
        let release = |op: &str, value: serde_json::Value| {
            json!({
                "id": "core", "version": "1.0.0", "specVersion": "1.0.0",
                "rules": {
                    "fields": {
                        "hp": { "type": "integer" },
                        "speed": { "type": "decimal" },
                        "label": { "type": "string" },
                        "langs": { "type": "set" },
                    },
                    "effects": [{ "target": { "fields": { "where": "false" } }, "op": op,
                        "value": value }],
                },
            })
        };
        let numbers = ruleset(release("add", json!(1)));
        let sets = ruleset(release("grant", json!({ "formula": "['elvish']" })));
        expect_test::expect![[r#"
            (
                [
                    "core:hp",
                    "core:speed",
                ],
                [
                    "core:langs",
                ],
            )
        "#]]
        .assert_debug_eq(&(targetable(&numbers), targetable(&sets)));
    }
}
