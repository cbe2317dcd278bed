//! Small builders for elements, templates and values on top of [`crate::writer`].

use crate::writer::{guid_of, ty, u16s, DefRef, Inst, Name, Tok, Val};

/// An element under construction.
#[derive(Clone, Debug)]
pub struct E {
    name: Name,
    dep: u16,
    attrs: Vec<(Name, Vec<Tok>)>,
    children: Vec<Tok>,
    empty: bool,
}

pub fn e(name: &str) -> E {
    E::named(Name::from(name))
}

impl E {
    pub fn named(name: Name) -> E {
        E {
            name,
            dep: 0xFFFF,
            attrs: Vec::new(),
            children: Vec::new(),
            empty: false,
        }
    }
    /// Dependency id (template definitions only).
    pub fn dep(mut self, d: u16) -> E {
        self.dep = d;
        self
    }
    /// Closed with 0x03 (`/>`), no children.
    pub fn empty(mut self) -> E {
        self.empty = true;
        self
    }
    pub fn attr(mut self, name: &str, val: Vec<Tok>) -> E {
        self.attrs.push((Name::from(name), val));
        self
    }
    pub fn attr_n(mut self, name: Name, val: Vec<Tok>) -> E {
        self.attrs.push((name, val));
        self
    }
    /// Attribute with literal string text.
    pub fn attr_s(self, name: &str, val: &str) -> E {
        self.attr(name, vec![text(val)])
    }
    /// Attribute holding one substitution.
    pub fn attr_sub(self, name: &str, idx: u16, t: u8) -> E {
        self.attr(name, vec![sub(idx, t)])
    }
    pub fn attr_opt(self, name: &str, idx: u16, t: u8) -> E {
        self.attr(name, vec![opt(idx, t)])
    }
    pub fn kid(mut self, k: E) -> E {
        self.children.extend(k.toks());
        self
    }
    pub fn push(mut self, t: Tok) -> E {
        self.children.push(t);
        self
    }
    pub fn adds(mut self, t: Vec<Tok>) -> E {
        self.children.extend(t);
        self
    }
    pub fn text(self, s: &str) -> E {
        self.push(text(s))
    }
    pub fn sub(self, idx: u16, t: u8) -> E {
        self.push(sub(idx, t))
    }
    pub fn opt(self, idx: u16, t: u8) -> E {
        self.push(opt(idx, t))
    }
    pub fn toks(self) -> Vec<Tok> {
        let mut out = vec![Tok::Open {
            name: self.name,
            dep: self.dep,
            attrs: !self.attrs.is_empty(),
        }];
        for (n, v) in self.attrs {
            out.push(Tok::Attr(n));
            out.extend(v);
        }
        if self.empty {
            out.push(Tok::CloseEmpty);
        } else {
            out.push(Tok::CloseStart);
            out.extend(self.children);
            out.push(Tok::End);
        }
        out
    }
    /// `Frag`, the element, `Eof`: a complete stream (record, definition body, BinXml value).
    pub fn stream(self) -> Vec<Tok> {
        let mut v = vec![Tok::Frag];
        v.extend(self.toks());
        v.push(Tok::Eof);
        v
    }
}

pub fn text(s: &str) -> Tok {
    Tok::Text(u16s(s))
}
pub fn sub(idx: u16, t: u8) -> Tok {
    Tok::Sub {
        idx,
        ty: t,
        opt: false,
    }
}
pub fn opt(idx: u16, t: u8) -> Tok {
    Tok::Sub {
        idx,
        ty: t,
        opt: true,
    }
}

/// A template instance token with definition `def` (an element, made into a stream).
pub fn inst(key: &str, def: E, values: Vec<Val>) -> Tok {
    Tok::Instance(Box::new(Inst {
        key: key.to_string(),
        def: def.stream(),
        values,
        def_ref: DefRef::Auto,
    }))
}

/// A record stream made of one template instance: `Frag, Instance, Eof`.
pub fn inst_record(key: &str, def: E, values: Vec<Val>) -> Vec<Tok> {
    vec![Tok::Frag, inst(key, def, values), Tok::Eof]
}

/// A BinXml value holding a nested instance (`Frag, Instance, Eof`), like Windows' EventData.
pub fn v_inst(key: &str, def: E, values: Vec<Val>) -> Val {
    Val::Xml(inst_record(key, def, values))
}

pub fn val(t: u8, bytes: Vec<u8>) -> Val {
    Val::B {
        ty: t,
        bytes,
        size: None,
    }
}
pub fn val_sized(t: u8, bytes: Vec<u8>, size: u16) -> Val {
    Val::B {
        ty: t,
        bytes,
        size: Some(size),
    }
}
pub fn units_bytes(units: &[u16]) -> Vec<u8> {
    units.iter().flat_map(|u| u.to_le_bytes()).collect()
}
pub fn v_null() -> Val {
    val(ty::NULL, vec![])
}
pub fn v_null_stale(n: usize) -> Val {
    val(ty::NULL, vec![0xAB; n])
}
pub fn v_str(s: &str) -> Val {
    val(ty::STRING, units_bytes(&u16s(s)))
}
pub fn v_units(u: &[u16]) -> Val {
    val(ty::STRING, units_bytes(u))
}
pub fn v_ansi(b: &[u8]) -> Val {
    val(ty::ANSI, b.to_vec())
}
pub fn v_i8(x: i8) -> Val {
    val(ty::I8, x.to_le_bytes().to_vec())
}
pub fn v_u8(x: u8) -> Val {
    val(ty::U8, vec![x])
}
pub fn v_i16(x: i16) -> Val {
    val(ty::I16, x.to_le_bytes().to_vec())
}
pub fn v_u16(x: u16) -> Val {
    val(ty::U16, x.to_le_bytes().to_vec())
}
pub fn v_i32(x: i32) -> Val {
    val(ty::I32, x.to_le_bytes().to_vec())
}
pub fn v_u32(x: u32) -> Val {
    val(ty::U32, x.to_le_bytes().to_vec())
}
pub fn v_i64(x: i64) -> Val {
    val(ty::I64, x.to_le_bytes().to_vec())
}
pub fn v_u64(x: u64) -> Val {
    val(ty::U64, x.to_le_bytes().to_vec())
}
pub fn v_f32(x: f32) -> Val {
    val(ty::R32, x.to_le_bytes().to_vec())
}
pub fn v_f64(x: f64) -> Val {
    val(ty::R64, x.to_le_bytes().to_vec())
}
pub fn v_bool(x: i32) -> Val {
    val(ty::BOOL, x.to_le_bytes().to_vec())
}
pub fn v_bin(b: &[u8]) -> Val {
    val(ty::BINARY, b.to_vec())
}
pub fn v_guid(g: [u8; 16]) -> Val {
    val(ty::GUID, g.to_vec())
}
pub fn v_sizet32(x: u32) -> Val {
    val(ty::SIZET, x.to_le_bytes().to_vec())
}
pub fn v_sizet64(x: u64) -> Val {
    val(ty::SIZET, x.to_le_bytes().to_vec())
}
pub fn v_filetime(x: u64) -> Val {
    val(ty::FILETIME, x.to_le_bytes().to_vec())
}
pub fn systime_bytes(f: [u16; 8]) -> Vec<u8> {
    f.iter().flat_map(|u| u.to_le_bytes()).collect()
}
pub fn v_systime(f: [u16; 8]) -> Val {
    val(ty::SYSTIME, systime_bytes(f))
}
pub fn sid_bytes(rev: u8, auth: u64, subs: &[u32]) -> Vec<u8> {
    let mut b = vec![rev, subs.len() as u8];
    b.extend_from_slice(&auth.to_be_bytes()[2..8]);
    for s in subs {
        b.extend_from_slice(&s.to_le_bytes());
    }
    b
}
pub fn v_sid(rev: u8, auth: u64, subs: &[u32]) -> Val {
    val(ty::SID, sid_bytes(rev, auth, subs))
}
pub fn v_hex32(x: u32) -> Val {
    val(ty::HEX32, x.to_le_bytes().to_vec())
}
pub fn v_hex64(x: u64) -> Val {
    val(ty::HEX64, x.to_le_bytes().to_vec())
}
/// A string array (0x81): NUL-terminated UTF-16 strings back to back.
pub fn v_str_array(items: &[&str]) -> Val {
    let mut b = Vec::new();
    for s in items {
        b.extend(units_bytes(&u16s(s)));
        b.extend_from_slice(&[0, 0]);
    }
    val(ty::ARRAY | ty::STRING, b)
}
/// Any fixed-size array: the items' bytes back to back.
pub fn v_array(item_ty: u8, items: &[Vec<u8>]) -> Val {
    val(ty::ARRAY | item_ty, items.concat())
}

/// A deterministic GUID from a label (for values).
pub fn guid(label: &str) -> [u8; 16] {
    guid_of(label)
}
