//! A field's value, its base and grants (EF "Fixed order" 1; EC "Field values"): an input's
//! saved value or default, and what grants add to it.

use super::*;

impl<'db> Work<'_, 'db> {
    /// An input field's base: its saved value checked against `min`/`max` (`out-of-range`, then
    /// clamped), or its default.
    pub(super) fn input_base(&mut self, ctx: &SheetContext<'db>) -> Result<Value, FieldError> {
        let saved = saved_handle(self.db, self.key).and_then(|h| h.value(self.db).clone());
        let Some(literal) = saved else {
            return Ok(default_value(&self.decl.decl).unwrap_or_default());
        };
        let value = field_literal(&literal, self.ty()).ok_or_else(|| {
            FieldError::new(
                ErrorCode::TypeMismatch,
                format!("the saved value {literal} is not a {:?}", self.ty()),
            )
        })?;
        let value = self.coerce(value)?;
        let clamped = self.clamp(value.clone(), ctx)?;
        if clamped != value {
            self.out.out_of_range = Some(OutOfRange {
                value,
                bound: clamped.clone(),
            });
        }
        Ok(clamped)
    }

    pub(super) fn grant_value(
        &self,
        grant: &GrantValue,
        ctx: &SheetContext<'db>,
    ) -> Result<Value, FieldError> {
        let rules = ctx.ruleset;
        Ok(match grant {
            GrantValue::Item { item } => Value::string(item.as_str()),
            GrantValue::Tag { tag } => Value::string(tag.as_str()),
            GrantValue::Field { field } => Value::string(field.as_str()),
            GrantValue::Query { query } => {
                let items = rules
                    .query_result(
                        query.r#type.as_str(),
                        query.r#where.as_ref().map(|w| w.as_str()),
                    )
                    .unwrap_or_default();
                Value::list(items.iter().map(|i| Value::string(i.as_str())).collect())
            }
            GrantValue::Formula { formula } => self.eval(formula.as_str(), ctx)?,
        })
    }
}
