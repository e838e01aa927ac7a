//! Effects (effect.schema.json): how active content changes fields, rolls, incoming changes and the
//! choice and changes steps of actions.

use schemars::JsonSchema;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};

use crate::checked::checked_struct;
use crate::shape::{self, Never, Shape};
use crate::{
    Change, Destination, Formula, Id, Keyed, Literal, Query, RollModifier, Rounding, Tag, TagEntry,
};

checked_struct! {
    /// An effect, in a content item's, template's, content type's, choice's, situational choice's or the
    /// rules' `effects`. Reading one checks the schema rules effects.md states: what each `op` targets and
    /// takes, and where `tags`, `multiplied` and `then` may appear.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
    #[serde(rename_all = "camelCase", try_from = "RawEffect")]
    pub struct Effect read as RawEffect {
        required {
            pub target: Target,
            pub op: Op,
        }
        optional {
            /// Optional, unique within the item: the competing-option ID instead of the index.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub id: Option<String>,
            /// What `op` takes: a formula, a grant value, a roll modifier, an option or `{ changes, to? }`.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub value: Option<EffectValue>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub when: Option<Formula>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub stack_key: Option<String>,
            /// For this effect's `multiply`.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub rounding: Option<Rounding>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub scope: Option<Scope>,
            /// `add` on rolls only: tags of the roll item it adds.
            #[serde(default, skip_serializing_if = "Vec::is_empty")]
            pub tags: Vec<TagEntry>,
            /// `add` on rolls only; default `true`.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub multiplied: Option<bool>,
            /// Informational only.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub duration: Option<Duration>,
            /// Incoming changes only: `setState`/`adjustState` changes with `entry: self`.
            #[serde(default, skip_serializing_if = "Vec::is_empty")]
            pub then: Vec<Change>,
        }
    }
}

/// Who content applies to: its holder (default) or the character it is applied to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Scope {
    Holder,
    Applied,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Op {
    Set,
    Add,
    Multiply,
    AtLeast,
    AtMost,
    Grant,
    RollModifier,
    Option,
    Changes,
}

/// `from` of a roll, choice or steps target: the carrying item's own actions, or any (default).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum From {
    #[serde(rename = "self")]
    Self_,
    Any,
}

/// What an effect changes.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
#[schemars(deny_unknown_fields)]
pub enum Target {
    /// `target: combat.ac`
    Field(Id),
    /// `target: { fields: { where } }`
    Fields { fields: FieldsQuery },
    /// `target: { rolls: [tags], from?, tally?, parts? }`
    Rolls {
        rolls: Vec<Tag>,
        #[serde(skip_serializing_if = "Option::is_none")]
        from: Option<From>,
        #[serde(skip_serializing_if = "Option::is_none")]
        tally: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        parts: Option<Vec<Tag>>,
    },
    /// `target: { incoming: { fields?, tags? } }`
    Incoming { incoming: IncomingFilter },
    /// `target: { choices: [tags], from? }`
    Choices {
        choices: Vec<Tag>,
        #[serde(skip_serializing_if = "Option::is_none")]
        from: Option<From>,
    },
    /// `target: { steps: [tags], from? }`
    Steps {
        steps: Vec<Tag>,
        #[serde(skip_serializing_if = "Option::is_none")]
        from: Option<From>,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FieldsQuery {
    pub r#where: Formula,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct IncomingFilter {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fields: Option<Vec<Id>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<Tag>>,
}

/// Every key a target map may have; [`Target`] is built from it, so an unknown key is reported with the
/// nearest of these.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct TargetMap {
    fields: Option<FieldsQuery>,
    rolls: Option<Vec<Tag>>,
    incoming: Option<IncomingFilter>,
    choices: Option<Vec<Tag>>,
    steps: Option<Vec<Tag>>,
    from: Option<From>,
    tally: Option<String>,
    parts: Option<Vec<Tag>>,
}

impl<'de> Deserialize<'de> for Target {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let map = match shape::deserialize::<D, Id, TargetMap, Never>(
            deserializer,
            "a field ID or a map with one of `fields`, `rolls`, `incoming`, `choices`, `steps`",
        )? {
            Shape::Scalar(id) => return Ok(Target::Field(id)),
            Shape::Map(map) => map,
            Shape::List(never) => match never {},
        };
        let TargetMap {
            fields,
            rolls,
            incoming,
            choices,
            steps,
            from,
            tally,
            parts,
        } = map;
        let kinds = [
            fields.is_some(),
            rolls.is_some(),
            incoming.is_some(),
            choices.is_some(),
            steps.is_some(),
        ];
        if kinds.iter().filter(|&&k| k).count() != 1 {
            return Err(D::Error::custom(
                "a target has exactly one of `fields`, `rolls`, `incoming`, `choices`, `steps`",
            ));
        }
        let only_rolls = |name: &str| {
            D::Error::custom(format_args!("`{name}` belongs to a `rolls` target only"))
        };
        if rolls.is_none() {
            if tally.is_some() {
                return Err(only_rolls("tally"));
            }
            if parts.is_some() {
                return Err(only_rolls("parts"));
            }
        }
        if (fields.is_some() || incoming.is_some()) && from.is_some() {
            return Err(D::Error::custom(
                "`from` belongs to a `rolls`, `choices` or `steps` target only",
            ));
        }
        Ok(if let Some(fields) = fields {
            Target::Fields { fields }
        } else if let Some(rolls) = rolls {
            Target::Rolls {
                rolls,
                from,
                tally,
                parts,
            }
        } else if let Some(incoming) = incoming {
            Target::Incoming { incoming }
        } else if let Some(choices) = choices {
            Target::Choices { choices, from }
        } else {
            Target::Steps {
                steps: steps.unwrap_or_default(),
                from,
            }
        })
    }
}

/// An effect's `value`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum EffectValue {
    /// `set`, `add`, `multiply`, `atLeast`, `atMost`, and a `grant` of one member.
    Formula(Formula),
    /// `grant` as `{ item }`, `{ tag }`, `{ field }`, `{ query }` or `{ formula }`.
    Grant(GrantValue),
    /// `rollModifier`: `{ kind, … }`.
    RollModifier(RollModifier),
    /// `option`: `{ id, changes?, to?, flags? }`.
    Option(EffectOption),
    /// `changes`: `{ changes, to? }`.
    Changes(ChangesValue),
}

/// What a `grant` adds to a `set` field.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
#[schemars(deny_unknown_fields)]
pub enum GrantValue {
    Item { item: Id },
    Tag { tag: Tag },
    Field { field: Id },
    Query { query: Query },
    Formula { formula: Formula },
}

/// An option an effect adds to matching choice steps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EffectOption {
    pub id: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<Change>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<Destination>,
    #[serde(default, skip_serializing_if = "Keyed::is_empty")]
    pub flags: Keyed<Formula>,
}

/// Changes an effect adds to matching changes steps (also the shape of a bare `changes:` fragment).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ChangesValue {
    pub changes: Vec<Change>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<Destination>,
}

/// `duration: { amount, unit, concentration }`, informational only.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Duration {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amount: Option<Literal>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concentration: Option<bool>,
}

/// Every key an effect's map value may have, across the value kinds.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct EffectValueMap {
    // Roll modifiers.
    kind: Option<crate::RollModifierKind>,
    below: Option<Formula>,
    once: Option<bool>,
    count: Option<Formula>,
    value: Option<Formula>,
    at: Option<Formula>,
    factor: Option<Formula>,
    steps: Option<Formula>,
    faces: Option<Vec<Formula>>,
    part: Option<String>,
    // Options and changes.
    id: Option<String>,
    changes: Option<Vec<Change>>,
    to: Option<Destination>,
    flags: Option<Keyed<Formula>>,
    // Grants.
    item: Option<Id>,
    tag: Option<Tag>,
    field: Option<Id>,
    query: Option<Query>,
    formula: Option<Formula>,
}

impl EffectValueMap {
    fn into_value(self) -> Result<EffectValue, String> {
        let EffectValueMap {
            kind,
            below,
            once,
            count,
            value,
            at,
            factor,
            steps,
            faces,
            part,
            id,
            changes,
            to,
            flags,
            item,
            tag,
            field,
            query,
            formula,
        } = self;
        let modifier_keys = [
            ("below", below.is_some()),
            ("once", once.is_some()),
            ("count", count.is_some()),
            ("value", value.is_some()),
            ("at", at.is_some()),
            ("factor", factor.is_some()),
            ("steps", steps.is_some()),
            ("faces", faces.is_some()),
            ("part", part.is_some()),
        ];
        let option_keys = [
            ("id", id.is_some()),
            ("changes", changes.is_some()),
            ("to", to.is_some()),
            ("flags", flags.is_some()),
        ];
        let grant_keys = [
            ("item", item.is_some()),
            ("tag", tag.is_some()),
            ("field", field.is_some()),
            ("query", query.is_some()),
            ("formula", formula.is_some()),
        ];
        let stray = |what: &str, groups: &[&[(&str, bool)]]| {
            groups
                .iter()
                .flat_map(|group| group.iter())
                .find(|(_, present)| *present)
                .map(|(key, _)| format!("key `{key}` does not belong in {what}"))
        };
        if let Some(kind) = kind {
            if let Some(error) = stray("a roll modifier", &[&option_keys, &grant_keys]) {
                return Err(error);
            }
            return Ok(EffectValue::RollModifier(RollModifier {
                kind,
                below,
                once,
                count,
                value,
                at,
                factor,
                steps,
                faces: faces.unwrap_or_default(),
                part,
            }));
        }
        if id.is_some() || changes.is_some() || to.is_some() || flags.is_some() {
            if let Some(error) = stray("an option or changes value", &[&modifier_keys, &grant_keys])
            {
                return Err(error);
            }
            return match id {
                Some(id) => Ok(EffectValue::Option(EffectOption {
                    id,
                    changes: changes.unwrap_or_default(),
                    to,
                    flags: flags.unwrap_or_default(),
                })),
                None if flags.is_some() => Err("an option value needs an `id`".to_owned()),
                None => match changes {
                    Some(changes) => Ok(EffectValue::Changes(ChangesValue { changes, to })),
                    None => Err("a changes value needs `changes`".to_owned()),
                },
            };
        }
        if let Some(error) = stray("a grant value", &[&modifier_keys]) {
            return Err(error);
        }
        let grants = grant_keys.iter().filter(|(_, present)| *present).count();
        if grants != 1 {
            return Err(
                "an effect value map has `kind` (a roll modifier), `id` (an option), `changes`, \
                 or exactly one of `item`, `tag`, `field`, `query`, `formula` (a grant)"
                    .to_owned(),
            );
        }
        let grant = if let Some(item) = item {
            GrantValue::Item { item }
        } else if let Some(tag) = tag {
            GrantValue::Tag { tag }
        } else if let Some(field) = field {
            GrantValue::Field { field }
        } else if let Some(query) = query {
            GrantValue::Query { query }
        } else {
            GrantValue::Formula {
                formula: formula.expect("one grant key is present"),
            }
        };
        Ok(EffectValue::Grant(grant))
    }
}

impl<'de> Deserialize<'de> for EffectValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match shape::deserialize::<D, Formula, EffectValueMap, Never>(
            deserializer,
            "a formula, a grant value, a roll modifier, an option or `{ changes, to? }`",
        )? {
            Shape::Scalar(formula) => Ok(EffectValue::Formula(formula)),
            Shape::Map(map) => map.into_value().map_err(D::Error::custom),
            Shape::List(never) => match never {},
        }
    }
}

impl TryFrom<RawEffect> for Effect {
    type Error = String;

    /// The schema errors effects.md names: what each op targets and takes.
    fn try_from(raw: RawEffect) -> Result<Effect, String> {
        let effect = raw.into_public();
        let op = effect.op;
        let Some(value) = &effect.value else {
            return Err("an effect needs a `value`".to_owned());
        };
        let value_fits = match value {
            EffectValue::Formula(_) => {
                matches!(
                    op,
                    Op::Set | Op::Add | Op::Multiply | Op::AtLeast | Op::AtMost | Op::Grant
                )
            }
            EffectValue::Grant(_) => op == Op::Grant,
            EffectValue::RollModifier(_) => op == Op::RollModifier,
            EffectValue::Option(_) => op == Op::Option,
            EffectValue::Changes(_) => op == Op::Changes,
        };
        if !value_fits {
            return Err(format!("this `value` doesn't fit `op: {}`", op.name()));
        }
        let target_fits = match &effect.target {
            Target::Field(_) => matches!(
                op,
                Op::Set | Op::Add | Op::Multiply | Op::AtLeast | Op::AtMost | Op::Grant
            ),
            Target::Fields { .. } => matches!(
                op,
                Op::Add | Op::Multiply | Op::AtLeast | Op::AtMost | Op::Grant
            ),
            Target::Rolls { tally: Some(_), .. } => {
                matches!(op, Op::Add | Op::AtLeast | Op::AtMost)
            }
            Target::Rolls { parts: Some(_), .. } => matches!(op, Op::Set | Op::RollModifier),
            Target::Rolls { .. } => {
                matches!(op, Op::Add | Op::AtLeast | Op::AtMost | Op::RollModifier)
            }
            Target::Incoming { .. } => matches!(
                op,
                Op::Set | Op::Add | Op::Multiply | Op::AtLeast | Op::AtMost
            ),
            Target::Choices { .. } => op == Op::Option,
            Target::Steps { .. } => op == Op::Changes,
        };
        if !target_fits {
            return Err(format!("`op: {}` doesn't apply to this target", op.name()));
        }
        let add_on_rolls = op == Op::Add && matches!(effect.target, Target::Rolls { .. });
        if !effect.tags.is_empty() && !add_on_rolls {
            return Err("`tags` is only for `add` on rolls".to_owned());
        }
        if effect.multiplied.is_some()
            && (!add_on_rolls || matches!(effect.target, Target::Rolls { tally: Some(_), .. }))
        {
            return Err("`multiplied` is only for `add` on rolls, not on a tally".to_owned());
        }
        if !effect.then.is_empty() && !matches!(effect.target, Target::Incoming { .. }) {
            return Err("`then` is only for incoming-change effects".to_owned());
        }
        Ok(effect)
    }
}

impl Op {
    pub fn name(self) -> &'static str {
        match self {
            Op::Set => "set",
            Op::Add => "add",
            Op::Multiply => "multiply",
            Op::AtLeast => "atLeast",
            Op::AtMost => "atMost",
            Op::Grant => "grant",
            Op::RollModifier => "rollModifier",
            Op::Option => "option",
            Op::Changes => "changes",
        }
    }
}
