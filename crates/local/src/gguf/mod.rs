//! GGUF files (llama.cpp's model format, spec:
//! <https://github.com/ggml-org/ggml/blob/master/docs/gguf.md>): the header,
//! the metadata, the tensor directory, and tensors read back as floats or,
//! for Q8_0, as their stored blocks. Versions 1–3, little-endian. Every
//! length read from the file is checked against what is left of it, so a
//! truncated or crafted file is an error, never a huge allocation.

mod blocks;
mod tokenizer;

use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom};

pub(crate) use blocks::GgmlType;
pub(crate) use tokenizer::tokenizer_from_gguf;

/// The alignment of the tensor data when `general.alignment` is absent.
const DEFAULT_ALIGNMENT: u64 = 32;
/// Nested arrays deeper than this are refused (a crafted file could
/// otherwise recurse without bound).
const MAX_DEPTH: usize = 8;
/// Dimensions a tensor may have.
const MAX_DIMS: u32 = 4;

/// A metadata value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    /// Any unsigned integer type (u8–u64).
    Unsigned(u64),
    /// Any signed integer type (i8–i64).
    Signed(i64),
    /// f32 or f64.
    Float(f64),
    Bool(bool),
    String(String),
    Array(Vec<Value>),
}

impl Value {
    /// The value as a u32, if it is an integer that fits.
    pub fn as_u32(&self) -> Option<u32> {
        match *self {
            Value::Unsigned(v) => u32::try_from(v).ok(),
            Value::Signed(v) => u32::try_from(v).ok(),
            _ => None,
        }
    }

    /// The value as an f32, if it is a number.
    pub fn as_f32(&self) -> Option<f32> {
        match *self {
            Value::Float(v) => Some(v as f32),
            Value::Unsigned(v) => Some(v as f32),
            Value::Signed(v) => Some(v as f32),
            _ => None,
        }
    }

    /// The value as a string, if it is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// The value as a bool, if it is one.
    pub fn as_bool(&self) -> Option<bool> {
        match *self {
            Value::Bool(b) => Some(b),
            _ => None,
        }
    }

    /// The elements, if the value is an array.
    pub fn as_array(&self) -> Option<&[Value]> {
        match self {
            Value::Array(values) => Some(values),
            _ => None,
        }
    }
}

/// Where a tensor is and what it holds.
#[derive(Debug, Clone)]
pub(crate) struct TensorInfo {
    /// Dimensions, innermost first (GGML's `ne`): a `rows × k` matrix is `[k, rows]`.
    pub dims: Vec<u64>,
    pub ty: GgmlType,
    /// Offset from the start of the tensor data.
    pub offset: u64,
}

impl TensorInfo {
    /// Values held.
    pub fn values(&self) -> usize {
        self.dims.iter().product::<u64>() as usize
    }

    fn bytes(&self) -> usize {
        self.values() / self.ty.block_values() * self.ty.block_bytes()
    }
}

/// A GGUF file's header: metadata and tensor directory.
#[derive(Debug)]
pub(crate) struct Gguf {
    pub metadata: HashMap<String, Value>,
    pub tensors: HashMap<String, TensorInfo>,
    data_offset: u64,
}

/// Reads the file's primitives, knowing how much of it is left.
struct Reader<'a, R> {
    inner: &'a mut R,
    /// Bytes per length prefix: 4 in version 1, 8 later.
    wide_lengths: bool,
    position: u64,
    len: u64,
}

impl<R: Read> Reader<'_, R> {
    fn bytes<const N: usize>(&mut self) -> Result<[u8; N], String> {
        let mut buf = [0u8; N];
        self.inner
            .read_exact(&mut buf)
            .map_err(|e| format!("truncated at byte {}: {e}", self.position))?;
        self.position += N as u64;
        Ok(buf)
    }

    fn u32(&mut self) -> Result<u32, String> {
        self.bytes().map(u32::from_le_bytes)
    }

    fn u64(&mut self) -> Result<u64, String> {
        self.bytes().map(u64::from_le_bytes)
    }

    /// A length or count, no larger than the bytes left (each counted
    /// element takes at least one byte).
    fn length(&mut self, what: &str) -> Result<usize, String> {
        let at = self.position;
        let n = if self.wide_lengths {
            self.u64()?
        } else {
            u64::from(self.u32()?)
        };
        if n > self.len.saturating_sub(self.position) {
            return Err(format!(
                "{what} of {n} at byte {at} is longer than the rest of the file"
            ));
        }
        Ok(n as usize)
    }

    fn string(&mut self) -> Result<String, String> {
        let n = self.length("a string")?;
        let mut buf = vec![0u8; n];
        self.inner
            .read_exact(&mut buf)
            .map_err(|e| format!("truncated at byte {}: {e}", self.position))?;
        self.position += n as u64;
        String::from_utf8(buf)
            .map_err(|_| format!("a string before byte {} is not UTF-8", self.position))
    }

    fn value(&mut self, ty: u32, depth: usize) -> Result<Value, String> {
        Ok(match ty {
            0 => Value::Unsigned(u64::from(self.bytes::<1>()?[0])),
            1 => Value::Signed(i64::from(self.bytes::<1>()?[0] as i8)),
            2 => Value::Unsigned(u64::from(u16::from_le_bytes(self.bytes()?))),
            3 => Value::Signed(i64::from(i16::from_le_bytes(self.bytes()?))),
            4 => Value::Unsigned(u64::from(self.u32()?)),
            5 => Value::Signed(i64::from(i32::from_le_bytes(self.bytes()?))),
            6 => Value::Float(f64::from(f32::from_le_bytes(self.bytes()?))),
            7 => Value::Bool(self.bytes::<1>()?[0] != 0),
            8 => Value::String(self.string()?),
            9 => {
                if depth >= MAX_DEPTH {
                    return Err(format!("arrays nested deeper than {MAX_DEPTH}"));
                }
                let element = self.u32()?;
                let n = self.length("an array")?;
                let mut values = Vec::with_capacity(n.min(1 << 20));
                for _ in 0..n {
                    values.push(self.value(element, depth + 1)?);
                }
                Value::Array(values)
            }
            10 => Value::Unsigned(self.u64()?),
            11 => Value::Signed(i64::from_le_bytes(self.bytes()?)),
            12 => Value::Float(f64::from_le_bytes(self.bytes()?)),
            other => return Err(format!("unknown metadata value type {other}")),
        })
    }
}

impl Gguf {
    /// Reads the header of the GGUF in `file` (from its start).
    pub fn read<R: Read + Seek>(file: &mut R) -> Result<Self, String> {
        let len = file.seek(SeekFrom::End(0)).map_err(|e| e.to_string())?;
        file.seek(SeekFrom::Start(0)).map_err(|e| e.to_string())?;
        let mut r = Reader {
            inner: file,
            wide_lengths: true,
            position: 0,
            len,
        };
        if &r.bytes::<4>()? != b"GGUF" {
            return Err("not a GGUF file (no `GGUF` magic at its start)".to_owned());
        }
        let version = r.u32()?;
        if !(1..=3).contains(&version) {
            return Err(format!("GGUF version {version} is not supported (1–3 are)"));
        }
        r.wide_lengths = version > 1;
        let tensor_count = r.length("the tensor count")?;
        let metadata_count = r.length("the metadata count")?;
        let mut metadata = HashMap::with_capacity(metadata_count);
        for _ in 0..metadata_count {
            let key = r.string()?;
            let ty = r.u32()?;
            let value = r
                .value(ty, 0)
                .map_err(|e| format!("metadata `{key}`: {e}"))?;
            metadata.insert(key, value);
        }
        let mut tensors = HashMap::with_capacity(tensor_count);
        for _ in 0..tensor_count {
            let name = r.string()?;
            let info = Self::tensor_info(&mut r).map_err(|e| format!("tensor `{name}`: {e}"))?;
            tensors.insert(name, info);
        }
        let alignment = match metadata.get("general.alignment") {
            None => DEFAULT_ALIGNMENT,
            Some(v) => match v.as_u32() {
                Some(a) if a > 0 && a.is_power_of_two() => u64::from(a),
                _ => {
                    return Err(format!(
                        "metadata `general.alignment` is {v:?}, not a power of two"
                    ));
                }
            },
        };
        let data_offset = r.position.div_ceil(alignment) * alignment;
        let gguf = Self {
            metadata,
            tensors,
            data_offset,
        };
        for (name, info) in &gguf.tensors {
            let end = gguf
                .data_offset
                .checked_add(info.offset)
                .and_then(|start| start.checked_add(info.bytes() as u64));
            match end {
                Some(end) if end <= len => {}
                Some(end) => {
                    return Err(format!(
                        "tensor `{name}` ends at byte {end}, past the end of the file ({len} bytes)"
                    ));
                }
                None => {
                    return Err(format!(
                        "tensor `{name}` has an offset of {} bytes, past any file",
                        info.offset
                    ));
                }
            }
        }
        Ok(gguf)
    }

    fn tensor_info<R: Read>(r: &mut Reader<'_, R>) -> Result<TensorInfo, String> {
        let n_dims = r.u32()?;
        if n_dims > MAX_DIMS {
            return Err(format!("{n_dims} dimensions (at most {MAX_DIMS})"));
        }
        let dims = (0..n_dims)
            .map(|_| r.u64())
            .collect::<Result<Vec<_>, _>>()?;
        let ty = GgmlType::from_id(r.u32()?)?;
        let offset = r.u64()?;
        let values = dims
            .iter()
            .try_fold(1u64, |n, &d| n.checked_mul(d))
            .filter(|&n| n <= r.len.saturating_mul(8))
            .ok_or_else(|| format!("dimensions {dims:?} hold more values than the file could"))?;
        if values % ty.block_values() as u64 != 0 {
            return Err(format!(
                "{values} values are not whole blocks of {ty:?} ({} values each)",
                ty.block_values()
            ));
        }
        Ok(TensorInfo { dims, ty, offset })
    }

    /// The metadata value `key`, if present.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.metadata.get(key)
    }

    /// The directory entry of tensor `name`, or an error naming it.
    pub fn info(&self, name: &str) -> Result<&TensorInfo, String> {
        self.tensors
            .get(name)
            .ok_or_else(|| format!("tensor `{name}` is missing"))
    }

    /// The stored bytes of tensor `name`.
    pub fn raw<R: Read + Seek>(&self, file: &mut R, name: &str) -> Result<Vec<u8>, String> {
        let info = self.info(name)?;
        let mut data = vec![0u8; info.bytes()];
        let start = self.data_offset + info.offset;
        file.seek(SeekFrom::Start(start))
            .and_then(|_| file.read_exact(&mut data))
            .map_err(|e| format!("tensor `{name}`: {e}"))?;
        Ok(data)
    }

    /// The values of tensor `name`, of any supported type, as floats.
    pub fn floats<R: Read + Seek>(&self, file: &mut R, name: &str) -> Result<Vec<f32>, String> {
        let info = self.info(name)?;
        let data = self.raw(file, name)?;
        let mut values = vec![0f32; info.values()];
        info.ty.dequantize(&data, &mut values);
        Ok(values)
    }
}

/// Writing small GGUF files, for tests.
#[cfg(test)]
pub(crate) mod test_file {
    use super::Value;

    /// An F32 tensor to write.
    pub(crate) struct TestTensor {
        pub name: String,
        /// Innermost first, as GGUF stores them.
        pub dims: Vec<u64>,
        pub values: Vec<f32>,
    }

    fn string(out: &mut Vec<u8>, s: &str) {
        out.extend((s.len() as u64).to_le_bytes());
        out.extend(s.as_bytes());
    }

    fn type_id(v: &Value) -> u32 {
        match v {
            Value::Unsigned(_) => 4,
            Value::Signed(_) => 5,
            Value::Float(_) => 6,
            Value::Bool(_) => 7,
            Value::String(_) => 8,
            Value::Array(_) => 9,
        }
    }

    /// `v` without its type (u32, i32 and f32 for numbers).
    fn payload(out: &mut Vec<u8>, v: &Value) {
        match v {
            Value::Unsigned(n) => out.extend((*n as u32).to_le_bytes()),
            Value::Signed(n) => out.extend((*n as i32).to_le_bytes()),
            Value::Float(f) => out.extend((*f as f32).to_le_bytes()),
            Value::Bool(b) => out.push(u8::from(*b)),
            Value::String(s) => string(out, s),
            Value::Array(values) => {
                out.extend(values.first().map_or(8, type_id).to_le_bytes());
                out.extend((values.len() as u64).to_le_bytes());
                values.iter().for_each(|v| payload(out, v));
            }
        }
    }

    /// A version-3 GGUF of `metadata` and F32 `tensors`, aligned to 32 bytes.
    pub(crate) fn write_gguf(metadata: &[(String, Value)], tensors: &[TestTensor]) -> Vec<u8> {
        let mut out = b"GGUF".to_vec();
        out.extend(3u32.to_le_bytes());
        out.extend((tensors.len() as u64).to_le_bytes());
        out.extend((metadata.len() as u64).to_le_bytes());
        for (key, v) in metadata {
            string(&mut out, key);
            out.extend(type_id(v).to_le_bytes());
            payload(&mut out, v);
        }
        let mut offset = 0u64;
        for t in tensors {
            string(&mut out, &t.name);
            out.extend((t.dims.len() as u32).to_le_bytes());
            for d in &t.dims {
                out.extend(d.to_le_bytes());
            }
            out.extend(0u32.to_le_bytes());
            out.extend(offset.to_le_bytes());
            offset += (t.values.len() as u64 * 4).div_ceil(32) * 32;
        }
        for t in tensors {
            out.resize(out.len().div_ceil(32) * 32, 0);
            for v in &t.values {
                out.extend(v.to_le_bytes());
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use super::test_file::{TestTensor, write_gguf};

    use super::*;

    /// A GGUF of `metadata` and one F32 tensor `t` of `values`.
    fn file(metadata: &[(&str, Value)], values: &[f32]) -> Vec<u8> {
        let metadata: Vec<(String, Value)> = metadata
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect();
        let tensor = TestTensor {
            name: "t".to_owned(),
            dims: vec![values.len() as u64],
            values: values.to_vec(),
        };
        write_gguf(&metadata, &[tensor])
    }

    fn text(s: &str) -> Value {
        Value::String(s.to_owned())
    }

    #[test]
    fn metadata_and_tensors_are_read() {
        let bytes = file(
            &[
                ("general.architecture", text("llama")),
                ("llama.block_count", Value::Unsigned(30)),
                ("llama.rope.freq_base", Value::Float(10_000.0)),
                ("tokenizer.ggml.add_bos_token", Value::Bool(true)),
                (
                    "tokenizer.ggml.merges",
                    Value::Array(vec![text("a b"), text("c")]),
                ),
            ],
            &[1.0, -2.5, 3.25],
        );
        let mut cursor = Cursor::new(bytes);
        let gguf = Gguf::read(&mut cursor).unwrap();
        assert_eq!(
            gguf.get("general.architecture").and_then(Value::as_str),
            Some("llama")
        );
        assert_eq!(
            gguf.get("llama.block_count").and_then(Value::as_u32),
            Some(30)
        );
        assert_eq!(
            gguf.get("llama.rope.freq_base").and_then(Value::as_f32),
            Some(10_000.0)
        );
        assert_eq!(
            gguf.get("tokenizer.ggml.add_bos_token")
                .and_then(Value::as_bool),
            Some(true)
        );
        let merges = gguf
            .get("tokenizer.ggml.merges")
            .and_then(Value::as_array)
            .unwrap();
        assert_eq!(merges[0].as_str(), Some("a b"));
        assert_eq!(
            gguf.floats(&mut cursor, "t").unwrap(),
            vec![1.0, -2.5, 3.25]
        );
        let missing = gguf.floats(&mut cursor, "u").unwrap_err();
        assert!(missing.contains("tensor `u` is missing"), "{missing}");
    }

    #[test]
    fn a_truncated_or_foreign_file_is_an_error_that_says_why() {
        let whole = file(&[("general.architecture", text("llama"))], &[1.0, 2.0]);
        let cut = whole[..whole.len() - 4].to_vec();
        let err = Gguf::read(&mut Cursor::new(cut)).unwrap_err();
        assert!(err.contains("tensor `t` ends at byte"), "{err}");
        // An offset so large that adding it would wrap around.
        let mut far = whole.clone();
        let name_at = far
            .windows(9)
            .position(|w| w == b"\x01\x00\x00\x00\x00\x00\x00\x00t")
            .unwrap();
        // After the name: dimensions (u32), one dimension (u64), type (u32), offset (u64).
        let offset_at = name_at + 9 + 4 + 8 + 4;
        far[offset_at..offset_at + 8].copy_from_slice(&u64::MAX.to_le_bytes());
        let err = Gguf::read(&mut Cursor::new(far)).unwrap_err();
        assert!(err.contains("past any file"), "{err}");
        let err = Gguf::read(&mut Cursor::new(b"PK\x03\x04rest".to_vec())).unwrap_err();
        assert!(err.contains("no `GGUF` magic"), "{err}");
        // A string claiming more bytes than the file has left.
        let mut huge = file(&[], &[]);
        huge.truncate(24);
        huge.extend(u64::MAX.to_le_bytes());
        let err = Gguf::read(&mut Cursor::new(huge)).unwrap_err();
        assert!(err.contains("longer than the rest of the file"), "{err}");
    }
}
