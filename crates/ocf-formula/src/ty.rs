//! Static types of formula values (catalogue §1.8), for the type checker.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use crate::value::Value;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Ty {
    Int,
    Decimal,
    Bool,
    String,
    List(Box<Ty>),
    Map(MapTy),
    Dice,
    Null,
    /// The checker's dynamic type: anything goes, checked when evaluated.
    Dyn,
    /// One of several types (`.value` of a field parameter over fields of several types, DA). Built
    /// with [`Ty::union`], which flattens and removes duplicates; never holds fewer than two.
    Union(Vec<Ty>),
}

/// A map type: its known members, and the type of any other member (`None`: a closed map, where
/// reading another member is `unknown-name`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct MapTy {
    pub members: BTreeMap<Arc<str>, Ty>,
    pub rest: Option<Box<Ty>>,
}

impl Ty {
    pub fn list(element: Ty) -> Ty {
        Ty::List(Box::new(element))
    }

    /// A closed map with these members.
    pub fn record<K: Into<Arc<str>>>(members: impl IntoIterator<Item = (K, Ty)>) -> Ty {
        Ty::Map(MapTy {
            members: members.into_iter().map(|(k, t)| (k.into(), t)).collect(),
            rest: None,
        })
    }

    /// A map whose members are all of one type, none known by name.
    pub fn open_map(rest: Ty) -> Ty {
        Ty::Map(MapTy {
            members: BTreeMap::new(),
            rest: Some(Box::new(rest)),
        })
    }

    /// int or decimal.
    pub fn number() -> Ty {
        Ty::union([Ty::Int, Ty::Decimal])
    }

    /// The union of the given types: nested unions are flattened, duplicates dropped, and a union
    /// with `dyn` in it is `dyn`.
    pub fn union(types: impl IntoIterator<Item = Ty>) -> Ty {
        let mut members: Vec<Ty> = Vec::new();
        for ty in types {
            match ty {
                Ty::Dyn => return Ty::Dyn,
                Ty::Union(inner) => {
                    for t in inner {
                        if !members.contains(&t) {
                            members.push(t);
                        }
                    }
                }
                t => {
                    if !members.contains(&t) {
                        members.push(t);
                    }
                }
            }
        }
        // An empty list literal (`list(dyn)`) adds nothing next to a list of known elements:
        // `c ? ['a'] : []` is a list of strings.
        let typed_list = |t: &Ty| matches!(t, Ty::List(e) if !e.is_dyn());
        if members.iter().any(typed_list) {
            members.retain(|t| !matches!(t, Ty::List(e) if e.is_dyn()));
        }
        match members.len() {
            0 => Ty::Dyn,
            1 => members.pop().unwrap_or(Ty::Dyn),
            _ => Ty::Union(members),
        }
    }

    /// The alternatives of the type: a union's members, or the type itself.
    pub fn alternatives(&self) -> &[Ty] {
        match self {
            Ty::Union(members) => members,
            t => std::slice::from_ref(t),
        }
    }

    /// Whether a value of type `self` may be used where `expected` is wanted: equal types, `dyn`
    /// either side, an int where a decimal is wanted (EC), each alternative of a union.
    pub fn fits(&self, expected: &Ty) -> bool {
        match (self, expected) {
            (Ty::Dyn, _) | (_, Ty::Dyn) => true,
            (Ty::Union(members), _) => members.iter().all(|m| m.fits(expected)),
            (_, Ty::Union(members)) => members.iter().any(|m| self.fits(m)),
            (Ty::Int, Ty::Decimal) => true,
            (Ty::List(a), Ty::List(b)) => a.fits(b),
            (Ty::Map(_), Ty::Map(b)) if b.members.is_empty() && b.rest.is_some() => true,
            _ => self == expected,
        }
    }

    /// The type of a value, as exact as the value shows. Maps are open with `dyn` members, since
    /// a member a value lacks may be absent rather than undeclared (catalogue §1.4).
    pub fn of_value(value: &Value) -> Ty {
        match value {
            Value::Null => Ty::Null,
            Value::Bool(_) => Ty::Bool,
            Value::Int(_) => Ty::Int,
            Value::Decimal(_) => Ty::Decimal,
            Value::String(_) => Ty::String,
            Value::Dice(_) => Ty::Dice,
            Value::List(items) => {
                if items.is_empty() {
                    Ty::list(Ty::Dyn)
                } else {
                    Ty::list(Ty::union(items.iter().map(Ty::of_value)))
                }
            }
            Value::Map(members) => Ty::Map(MapTy {
                members: members
                    .iter()
                    .map(|(k, v)| (k.clone(), Ty::of_value(v)))
                    .collect(),
                rest: Some(Box::new(Ty::Dyn)),
            }),
        }
    }

    pub fn is_dyn(&self) -> bool {
        matches!(self, Ty::Dyn)
    }
}

impl fmt::Display for Ty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ty::Int => f.write_str("int"),
            Ty::Decimal => f.write_str("decimal"),
            Ty::Bool => f.write_str("bool"),
            Ty::String => f.write_str("string"),
            Ty::Dice => f.write_str("dice"),
            Ty::Null => f.write_str("null"),
            Ty::Dyn => f.write_str("dyn"),
            Ty::List(t) => write!(f, "list({t})"),
            Ty::Map(m) => {
                f.write_str("map")?;
                if m.members.is_empty() {
                    return match &m.rest {
                        Some(rest) if !rest.is_dyn() => write!(f, "({rest})"),
                        _ => Ok(()),
                    };
                }
                f.write_str("{ ")?;
                for (i, (k, t)) in m.members.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{k}: {t}")?;
                }
                if m.rest.is_some() {
                    f.write_str(", ..")?;
                }
                f.write_str(" }")
            }
            Ty::Union(members) => {
                for (i, t) in members.iter().enumerate() {
                    if i > 0 {
                        f.write_str(" | ")?;
                    }
                    write!(f, "{t}")?;
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widening_and_unions() {
        assert!(Ty::Int.fits(&Ty::Decimal));
        assert!(!Ty::Decimal.fits(&Ty::Int));
        assert!(Ty::Int.fits(&Ty::number()));
        assert!(Ty::number().fits(&Ty::Decimal));
        assert!(!Ty::union([Ty::Int, Ty::String]).fits(&Ty::Decimal));
        assert!(Ty::list(Ty::Int).fits(&Ty::list(Ty::Decimal)));
        assert!(Ty::Dyn.fits(&Ty::String) && Ty::String.fits(&Ty::Dyn));
        assert_eq!(
            Ty::union([Ty::Int, Ty::union([Ty::Int, Ty::Bool])]).to_string(),
            "int | bool"
        );
        assert_eq!(Ty::union([Ty::Int, Ty::Dyn]), Ty::Dyn);
        assert_eq!(
            Ty::union([Ty::list(Ty::String), Ty::list(Ty::Dyn)]),
            Ty::list(Ty::String)
        );
        let view = Ty::record([("id", Ty::String), ("tags", Ty::list(Ty::String))]);
        assert_eq!(view.to_string(), "map{ id: string, tags: list(string) }");
    }
}
