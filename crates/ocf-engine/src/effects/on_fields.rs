//! Effects on a set of fields (EF "Targets", EC "Effects on a set of fields"): the fields a
//! `{ fields: { where } }` target reaches, worked out once per ruleset, and whether an instance
//! stands on a field whose tags are computed.

use ocf_formula::{MapContext, Root, Value};
use ocf_model::Target;

use super::{Instance, RulesetInput};
use crate::context::field_view;

/// The key of [`matching_fields`]: a set-of-fields `where`, and whether the effect grants (then it
/// matches `set` fields, else `integer` and `decimal` ones).
#[salsa::interned(debug, revisions = usize::MAX)]
pub struct FieldsWhere<'db> {
    #[returns(copy)]
    pub ruleset: RulesetInput,
    #[returns(ref)]
    pub text: String,
    #[returns(copy)]
    pub grant: bool,
    /// `pick`, for a choice's effect (its `where` may read it).
    #[returns(ref)]
    pub pick: Option<Value>,
    /// `slot`, for a slotted choice's effect.
    #[returns(copy)]
    pub slot: Option<i64>,
}

/// The fields a set-of-fields target reaches, in ruleset field order (EF, "Targets"). It reads
/// only the ruleset, so it is worked out once per ruleset, whatever the character.
pub(crate) fn matching_fields_query<'db>(
    db: &'db dyn salsa::Database,
    key: FieldsWhere<'db>,
) -> Vec<String> {
    let ruleset = key.ruleset(db).ruleset(db);
    let Ok(formula) = crate::formula::parse_in(ruleset, key.text(db)) else {
        return Vec::new();
    };
    use ocf_model::FieldType::*;
    ruleset
        .fields
        .iter()
        .filter(|(_, decl)| match decl.decl.r#type {
            Set => key.grant(db),
            Integer | Decimal => !key.grant(db),
            _ => false,
        })
        .filter(|(id, decl)| {
            // A field with computed tags is matched on each sheet by its tags there.
            if has_computed_tags(decl) {
                return true;
            }
            let mut ctx = MapContext::new().with_root(Root::Item, field_view(id, decl));
            if let Some(pick) = key.pick(db) {
                ctx = ctx.with_root(Root::Pick, pick.clone());
            }
            if let Some(slot) = key.slot(db) {
                ctx = ctx.with_root(Root::Slot, Value::Int(slot));
            }
            matches!(formula.evaluate(&ctx), Ok(Value::Bool(true)))
        })
        .map(|(id, _)| id.to_owned())
        .collect()
}

/// Whether a field's tags include a `{ formula }` entry (rules-and-fields.md, "Tags from a formula").
fn has_computed_tags(decl: &ocf_model::Declared<ocf_model::FieldDecl>) -> bool {
    decl.decl
        .tags
        .iter()
        .any(|t| matches!(t, ocf_model::Computed::Formula { .. }))
}

/// Whether `instance` stands on its field given the field's tags on this sheet. An instance of an
/// effect on a set of fields reaching a field with computed tags exists only when the `where`
/// holds with those tags (EF, "Targets": "the effect has an instance on it on that sheet when
/// `where` holds, and none otherwise"); every other instance stands.
pub fn stands_on_tags(ruleset: &ocf_model::Ruleset, instance: &Instance, tags: &[String]) -> bool {
    let Target::Fields { fields } = &instance.effect.target else {
        return true;
    };
    let Some((id, decl)) = instance
        .field
        .as_deref()
        .and_then(|f| ruleset.fields.get(f).map(|d| (f, d)))
    else {
        return true;
    };
    if !has_computed_tags(decl) {
        return true;
    }
    let Ok(formula) = ocf_formula::Formula::parse(fields.r#where.0.as_str()) else {
        return false;
    };
    let tags = tags.iter().map(|t| Value::string(t.as_str())).collect();
    let mut ctx = MapContext::new().with_root(
        Root::Item,
        crate::context::field_view_with_tags(id, decl, tags),
    );
    if let Some(pick) = &instance.pick {
        ctx = ctx.with_root(Root::Pick, pick.clone());
    }
    if let Some(slot) = instance.slot {
        ctx = ctx.with_root(Root::Slot, Value::Int(slot));
    }
    matches!(formula.evaluate(&ctx), Ok(Value::Bool(true)))
}
