//! A field's value, `multiply` and rounding (EF "Fixed order" 4, "Rounding"): the value coerced
//! to the field's type and rounded once at the end by the field's `rounding`, else the game's.

use super::*;

impl<'db> Work<'_, 'db> {
    /// Checks a value against the field's type; an int widens for a decimal field and a whole
    /// number for a dice field. An integer field keeps a decimal until the end.
    pub(super) fn coerce(&self, value: Value) -> Result<Value, FieldError> {
        let ok = match (self.ty(), &value) {
            (FieldType::Integer, Value::Int(_) | Value::Decimal(_)) => true,
            (FieldType::Decimal, Value::Int(n)) => {
                return Decimal::from_int(*n).map(Value::Decimal).map_err(arith);
            }
            (FieldType::Decimal, Value::Decimal(_)) => true,
            (FieldType::Boolean, Value::Bool(_)) => true,
            (FieldType::String | FieldType::Enum | FieldType::Id, Value::String(_)) => true,
            (FieldType::Set, Value::List(_)) => true,
            (FieldType::Dice, Value::Dice(_)) => true,
            (FieldType::Dice, Value::Int(n)) => return Ok(Value::dice(DiceValue::flat(*n))),
            _ => false,
        };
        if ok {
            Ok(value)
        } else {
            Err(FieldError::new(
                ErrorCode::TypeMismatch,
                format!("a {} is not a {:?} value", value.type_name(), self.ty()),
            ))
        }
    }

    /// Rounds an integer field's decimal by the field's `rounding`, else the game's.
    pub(super) fn finish(&self, value: Value) -> Result<Value, FieldError> {
        match (self.ty(), &value) {
            (FieldType::Integer, Value::Decimal(d)) => {
                let rounding = self
                    .decl
                    .decl
                    .rounding
                    .or(self.settings.rounding)
                    .unwrap_or(Rounding::Floor);
                Ok(Value::Int(round(*d, rounding)))
            }
            _ => Ok(value),
        }
    }
}
