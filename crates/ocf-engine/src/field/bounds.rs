//! A field's value, bounds (EF "Fixed order" 5; EC "Field values"): `atLeast` / `atMost` and
//! the field's `min` / `max`, and the limits a value is reported against.

use super::*;

impl<'db> Work<'_, 'db> {
    /// Clamps a number to the field's `min` and `max`.
    pub(super) fn clamp(&self, value: Value, ctx: &SheetContext<'db>) -> Result<Value, FieldError> {
        let mut value = value;
        if !matches!(value, Value::Int(_) | Value::Decimal(_)) {
            return Ok(value);
        }
        if let Some(min) = &self.decl.decl.min {
            let bound = self.eval(min.as_str(), ctx);
            let bound = self.coerce(bound.map_err(|e| e.at(|| self.own_site("min")))?)?;
            if compare(&value, &bound)? == std::cmp::Ordering::Less {
                value = bound;
            }
        }
        if let Some(max) = &self.decl.decl.max {
            let bound = self.eval(max.as_str(), ctx);
            let bound = self.coerce(bound.map_err(|e| e.at(|| self.own_site("max")))?)?;
            if compare(&value, &bound)? == std::cmp::Ordering::Greater {
                value = bound;
            }
        }
        self.finish(value)
    }

    /// `out-of-limits`: each named limit the final value is outside of.
    pub(super) fn limits(
        &mut self,
        value: &Value,
        ctx: &SheetContext<'db>,
    ) -> Result<(), FieldError> {
        for (name, limit) in self.decl.decl.limits.iter() {
            for (bound, below) in [(&limit.min, true), (&limit.max, false)] {
                let Some(bound) = bound else { continue };
                let bound = self
                    .eval(bound.as_str(), ctx)
                    .map_err(|e| e.at(|| self.own_site(&format!("limits/{name}"))))?;
                let outside = match compare(value, &bound)? {
                    std::cmp::Ordering::Less => below,
                    std::cmp::Ordering::Greater => !below,
                    std::cmp::Ordering::Equal => false,
                };
                if outside {
                    self.out.out_of_limits.push(OutOfLimits {
                        limit: name.to_owned(),
                        value: value.clone(),
                        bound,
                    });
                }
            }
        }
        Ok(())
    }
}
