//! Deserializing by the shape of the written value: the spec lets several properties be a scalar or a
//! map (`target: combat.ac` or `target: { rolls: [...] }`), a list or a map (`options`). Serde's untagged
//! enums would buffer the value and lose the path and the reason; this visitor streams it into the one
//! type that fits its shape, so errors inside keep their path.

use std::any::TypeId;
use std::fmt;
use std::marker::PhantomData;

use serde::de::value::{
    BoolDeserializer, F64Deserializer, I64Deserializer, MapAccessDeserializer,
    SeqAccessDeserializer, StrDeserializer, U64Deserializer,
};
use serde::de::{self, MapAccess, SeqAccess, Unexpected, Visitor};
use serde::{Deserialize, Deserializer};

/// A value read by its shape.
pub(crate) enum Shape<S, M, L> {
    Scalar(S),
    Map(M),
    List(L),
}

/// A shape that is not allowed in this place.
pub(crate) enum Never {}

impl<'de> Deserialize<'de> for Never {
    fn deserialize<D: Deserializer<'de>>(_: D) -> Result<Self, D::Error> {
        Err(de::Error::custom(
            "unreachable: the shape visitor rejects this shape itself",
        ))
    }
}

/// Reads a scalar into `S`, a map into `M` and a list into `L`; `Never` marks a shape not allowed.
pub(crate) fn deserialize<'de, D, S, M, L>(
    deserializer: D,
    expecting: &'static str,
) -> Result<Shape<S, M, L>, D::Error>
where
    D: Deserializer<'de>,
    S: Deserialize<'de> + 'static,
    M: Deserialize<'de> + 'static,
    L: Deserialize<'de> + 'static,
{
    deserializer.deserialize_any(ShapeVisitor::<S, M, L> {
        expecting,
        marker: PhantomData,
    })
}

struct ShapeVisitor<S, M, L> {
    expecting: &'static str,
    marker: PhantomData<(S, M, L)>,
}

fn allowed<T: 'static>() -> bool {
    TypeId::of::<T>() != TypeId::of::<Never>()
}

impl<S, M, L> ShapeVisitor<S, M, L>
where
    S: 'static,
{
    fn scalar<E, T>(&self, unexpected: Unexpected<'_>, read: T) -> Result<Shape<S, M, L>, E>
    where
        E: de::Error,
        T: FnOnce() -> Result<S, E>,
    {
        if allowed::<S>() {
            read().map(Shape::Scalar)
        } else {
            Err(E::invalid_type(unexpected, &self.expecting))
        }
    }
}

impl<'de, S, M, L> Visitor<'de> for ShapeVisitor<S, M, L>
where
    S: Deserialize<'de> + 'static,
    M: Deserialize<'de> + 'static,
    L: Deserialize<'de> + 'static,
{
    type Value = Shape<S, M, L>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.expecting)
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        self.scalar(Unexpected::Bool(v), || {
            S::deserialize(BoolDeserializer::new(v))
        })
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        self.scalar(Unexpected::Signed(v), || {
            S::deserialize(I64Deserializer::new(v))
        })
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        self.scalar(Unexpected::Unsigned(v), || {
            S::deserialize(U64Deserializer::new(v))
        })
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        self.scalar(Unexpected::Float(v), || {
            S::deserialize(F64Deserializer::new(v))
        })
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        self.scalar(Unexpected::Str(v), || {
            S::deserialize(StrDeserializer::new(v))
        })
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        if allowed::<M>() {
            M::deserialize(MapAccessDeserializer::new(map)).map(Shape::Map)
        } else {
            Err(de::Error::invalid_type(Unexpected::Map, &self.expecting))
        }
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        if allowed::<L>() {
            L::deserialize(SeqAccessDeserializer::new(seq)).map(Shape::List)
        } else {
            Err(de::Error::invalid_type(Unexpected::Seq, &self.expecting))
        }
    }
}
