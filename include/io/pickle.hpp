// The part of Python's pickle format that PyTorch checkpoints use, read and
// written without Python.
//
// A pickle is a program for a small stack machine: its opcodes push values,
// build containers and call functions ("globals") named in the stream. A
// general unpickler runs whatever function a file names, which is why loading
// an untrusted pickle in Python can run arbitrary code. This one knows the
// opcodes of protocols 2 to 5 that describe data, and calls none of the
// file's functions: the few globals torch.save writes (OrderedDict, the
// tensor rebuilders, the storage types) are recognised by name and
// interpreted here; any other global, and any opcode outside the list, is
// refused with an error naming it.
#pragma once
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "../any_tensor.hpp"
#include "file.hpp"

namespace tsr::io {

// A Python value as a checkpoint holds it: None, bool, int, float, str, a
// tensor, and lists, tuples and dicts of those (dicts keep their order, and
// whether they were OrderedDicts, as a state_dict is).
class PickleValue {
 public:
  struct None {};
  struct List {
    std::vector<PickleValue> items;
  };
  struct Tuple {
    std::vector<PickleValue> items;
  };
  struct Dict {
    std::vector<std::pair<PickleValue, PickleValue>> items;
    bool ordered = false;  // collections.OrderedDict rather than dict
  };
  using Variant = std::variant<None, bool, int64_t, double, std::string, AnyTensor, List, Tuple, Dict>;

  PickleValue() = default;
  // Any of the alternatives, or what converts to one (an int, a string
  // literal, a Tensor<T>).
  template <class V, class = std::enable_if_t<std::is_constructible_v<Variant, V&&>>>
  PickleValue(V&& v) : value_(std::forward<V>(v)) {}  // NOLINT: implicit, as Python's values

  const Variant& value() const { return value_; }
  Variant& value() { return value_; }
  template <class V>
  bool is() const {
    return std::holds_alternative<V>(value_);
  }
  template <class V>
  const V* get_if() const {
    return std::get_if<V>(&value_);
  }
  // The Python type's name, for errors ("int", "OrderedDict", ...).
  const char* type_name() const {
    static constexpr const char* names[] = {"NoneType", "bool", "int", "float", "str", "Tensor", "list", "tuple", "dict"};
    if (const Dict* d = get_if<Dict>(); d && d->ordered) return "OrderedDict";
    return names[value_.index()];
  }
  // The value of a dict's entry whose key is the string `key`, or nullptr.
  const PickleValue* find(const std::string& key) const {
    if (const Dict* d = get_if<Dict>())
      for (const auto& [k, v] : d->items)
        if (const auto* s = k.get_if<std::string>(); s && *s == key) return &v;
    return nullptr;
  }

 private:
  Variant value_;
};

namespace detail {

// What the unpickler asks its caller for: the tensor torch.save described
// as _rebuild_tensor_v2(storage, offset, size, stride, ...), the storage
// being the persistent id ('storage', torch.<Type>Storage, key, location,
// numel).
struct TensorRequest {
  std::string storage_type;  // "FloatStorage", ...
  std::string key;           // the record "data/<key>"
  int64_t storage_numel = 0;
  int64_t offset = 0;
  Shape sizes;
  Strides strides;
};
using TensorBuilder = std::function<AnyTensor(const TensorRequest&)>;

class Unpickler {
 public:
  Unpickler(ByteView bytes, std::string name, TensorBuilder build)
      : p_(bytes.data), n_(bytes.size), name_(std::move(name)), build_(std::move(build)) {}

  PickleValue load() {
    for (;;) {
      const unsigned char op = byte();
      switch (op) {
        case 0x80: check(byte() <= 5, bad(), " (unsupported protocol)"); break;       // PROTO
        case 0x95: take(8); break;                                                        // FRAME
        case '.': {                                                                       // STOP
          Node* result = pop();
          check(stack_.empty() && marks_.empty(), bad(), " (values left on the stack)");
          budget_ = 8 * arena_.size() + 64;
          return convert(result, 0);
        }
        case '(': marks_.push_back(stack_.size()); break;  // MARK
        case '0': pop(); break;                            // POP
        case '1': pop_mark(); break;                       // POP_MARK
        case '2': push(top()); break;                      // DUP
        case 'N': push(make(Kind::None)); break;
        case 0x88: push(make_bool(true)); break;   // NEWTRUE
        case 0x89: push(make_bool(false)); break;  // NEWFALSE
        case 'J': push(make_int(static_cast<int32_t>(read_le<uint32_t>(take(4))))); break;  // BININT
        case 'K': push(make_int(byte())); break;                                             // BININT1
        case 'M': push(make_int(read_le<uint16_t>(take(2)))); break;                         // BININT2
        case 0x8a: push(make_int(long_int(byte()))); break;                                  // LONG1
        case 0x8b: push(make_int(long_int(read_le<uint32_t>(take(4))))); break;              // LONG4
        case 'G': {                                                                          // BINFLOAT (big-endian)
          const unsigned char* b = take(8);
          uint64_t bits = 0;
          for (int k = 0; k < 8; ++k) bits = (bits << 8) | b[k];
          Node* f = make(Kind::Float);
          std::memcpy(&f->real, &bits, 8);
          push(f);
          break;
        }
        case 0x8c: push(make_string(byte())); break;                         // SHORT_BINUNICODE
        case 'X': push(make_string(read_le<uint32_t>(take(4)))); break;      // BINUNICODE
        case 0x8d: push(make_string(read_le<uint64_t>(take(8)))); break;     // BINUNICODE8
        case ')': push(make(Kind::Tuple)); break;                            // EMPTY_TUPLE
        case 't': push(make_sequence(Kind::Tuple, pop_mark())); break;       // TUPLE
        case 0x85: case 0x86: case 0x87: {                                   // TUPLE1..3
          const std::size_t k = op - 0x84u;
          check(stack_.size() >= k + floor(), bad(), " (stack underflow)");
          std::vector<Node*> items(stack_.end() - static_cast<std::ptrdiff_t>(k), stack_.end());
          stack_.resize(stack_.size() - k);
          push(make_sequence(Kind::Tuple, std::move(items)));
          break;
        }
        case ']': push(make(Kind::List)); break;                        // EMPTY_LIST
        case 'l': push(make_sequence(Kind::List, pop_mark())); break;   // LIST
        case 'a': {                                                     // APPEND
          Node* v = pop();
          list_at_top()->items.push_back(v);
          break;
        }
        case 'e': {  // APPENDS
          std::vector<Node*> items = pop_mark();
          Node* list = list_at_top();
          list->items.insert(list->items.end(), items.begin(), items.end());
          break;
        }
        case '}': push(make(Kind::Dict)); break;  // EMPTY_DICT
        case 'd': {                               // DICT
          std::vector<Node*> items = pop_mark();
          Node* d = make(Kind::Dict);
          set_items(d, items);
          push(d);
          break;
        }
        case 's': {  // SETITEM
          Node* v = pop();
          Node* k = pop();
          set_items(dict_at_top(), {k, v});
          break;
        }
        case 'u': {  // SETITEMS
          std::vector<Node*> items = pop_mark();
          set_items(dict_at_top(), items);
          break;
        }
        case 'q': memo_[byte()] = top(); break;                          // BINPUT
        case 'r': memo_[read_le<uint32_t>(take(4))] = top(); break;      // LONG_BINPUT
        case 0x94: memo_[static_cast<uint32_t>(memo_.size())] = top(); break;  // MEMOIZE
        case 'h': push(memo(byte())); break;                             // BINGET
        case 'j': push(memo(read_le<uint32_t>(take(4)))); break;         // LONG_BINGET
        case 'c': {                                                      // GLOBAL
          std::string module = line(), name = line();
          push(make_global(module, name));
          break;
        }
        case 0x93: {  // STACK_GLOBAL
          Node* name = pop();
          Node* module = pop();
          check(module->kind == Kind::String && name->kind == Kind::String, bad(), " (STACK_GLOBAL needs two strings)");
          push(make_global(module->text, name->text));
          break;
        }
        case 'R': {  // REDUCE
          Node* args = pop();
          Node* callable = pop();
          push(reduce(callable, args));
          break;
        }
        case 'b': {  // BUILD: only the state of an OrderedDict (a state_dict's _metadata), which is dropped
          pop();
          check(top()->kind == Kind::Dict, bad(), " (BUILD of a ", kind_name(top()->kind), ")");
          break;
        }
        case 'Q': push(persistent(pop())); break;  // BINPERSID
        default:
          fail<Error>("'", name_, "': pickle opcode 0x", hex(op), " at byte ", pos_ - 1,
                      " is not one that PyTorch checkpoints use; refusing to load it");
      }
    }
  }

 private:
  enum class Kind : uint8_t { None, Bool, Int, Float, String, Tuple, List, Dict, Global, Storage, Tensor };
  static const char* kind_name(Kind k) {
    static constexpr const char* names[] = {"None", "bool", "int", "float", "str", "tuple", "list", "dict", "global", "storage", "tensor"};
    return names[static_cast<int>(k)];
  }
  struct Node {
    Kind kind;
    bool ordered = false;  // an OrderedDict
    int64_t integer = 0;   // Int, Bool; a Storage's numel
    double real = 0;
    std::string text;            // String; a Global's "module.name"; a Storage's key
    std::string storage_type;    // a Storage's type name
    std::vector<Node*> items;    // Tuple, List; a Dict's keys and values, interleaved
    std::unordered_map<std::string, std::size_t> index;  // a Dict's key -> position in items
    AnyTensor tensor;
  };

  // ----- reading the stream ----------------------------------------------------
  std::string bad() const { return "'" + name_ + "' holds a malformed pickle"; }
  static std::string hex(unsigned v) {
    const char* digits = "0123456789abcdef";
    return {digits[(v >> 4) & 15], digits[v & 15]};
  }
  const unsigned char* take(uint64_t k) {
    check(k <= n_ - pos_, bad(), " (truncated)");
    const unsigned char* at = p_ + pos_;
    pos_ += static_cast<std::size_t>(k);
    return at;
  }
  unsigned char byte() { return *take(1); }
  std::string line() {
    const std::size_t start = pos_;
    while (pos_ < n_ && p_[pos_] != '\n') ++pos_;
    check(pos_ < n_, bad(), " (truncated)");
    return std::string(reinterpret_cast<const char*>(p_ + start), pos_++ - start);
  }
  // A little-endian two's-complement integer of k bytes (LONG1, LONG4).
  int64_t long_int(uint64_t k) {
    check(k <= 8, "'", name_, "': an integer of ", k, " bytes does not fit in 64 bits");
    const unsigned char* b = take(k);
    if (k == 0) return 0;
    uint64_t v = 0;
    for (uint64_t i = k; i-- > 0;) v = (v << 8) | b[i];
    if (k < 8 && (b[k - 1] & 0x80)) v |= ~uint64_t{0} << (8 * k);  // sign-extend
    return static_cast<int64_t>(v);
  }

  // ----- the stack -----------------------------------------------------------------
  std::size_t floor() const { return marks_.empty() ? 0 : marks_.back(); }
  void push(Node* v) { stack_.push_back(v); }
  Node* top() const {
    check(stack_.size() > floor(), bad(), " (stack underflow)");
    return stack_.back();
  }
  Node* pop() {
    Node* v = top();
    stack_.pop_back();
    return v;
  }
  std::vector<Node*> pop_mark() {
    check(!marks_.empty(), bad(), " (no mark)");
    const std::size_t m = marks_.back();
    marks_.pop_back();
    std::vector<Node*> items(stack_.begin() + static_cast<std::ptrdiff_t>(m), stack_.end());
    stack_.resize(m);
    return items;
  }
  Node* memo(uint32_t k) const {
    const auto it = memo_.find(k);
    check(it != memo_.end(), bad(), " (memo key ", k, " not set)");
    return it->second;
  }
  Node* list_at_top() const {
    Node* l = top();
    check(l->kind == Kind::List, bad(), " (APPEND to a ", kind_name(l->kind), ")");
    return l;
  }
  Node* dict_at_top() const {
    Node* d = top();
    check(d->kind == Kind::Dict, bad(), " (SETITEM on a ", kind_name(d->kind), ")");
    return d;
  }

  // ----- values ----------------------------------------------------------------------
  Node* make(Kind k) {
    arena_.push_back(std::make_unique<Node>());
    arena_.back()->kind = k;
    return arena_.back().get();
  }
  Node* make_bool(bool b) {
    Node* v = make(Kind::Bool);
    v->integer = b;
    return v;
  }
  Node* make_int(int64_t i) {
    Node* v = make(Kind::Int);
    v->integer = i;
    return v;
  }
  Node* make_string(uint64_t length) {
    Node* v = make(Kind::String);
    const unsigned char* b = take(length);
    v->text.assign(reinterpret_cast<const char*>(b), static_cast<std::size_t>(length));
    return v;
  }
  Node* make_sequence(Kind k, std::vector<Node*> items) {
    Node* v = make(k);
    v->items = std::move(items);
    return v;
  }
  // A dict key's identity: the hashable scalars a checkpoint's keys are.
  std::string key_of(const Node* k) const {
    switch (k->kind) {
      case Kind::String: return "s" + k->text;
      case Kind::Int: case Kind::Bool: return "i" + std::to_string(k->integer);  // True == 1, as in Python
      case Kind::None: return "n";
      default: fail<Error>("'", name_, "': a dict key of type ", kind_name(k->kind), " is not supported");
    }
  }
  void set_items(Node* d, const std::vector<Node*>& items) {
    check(items.size() % 2 == 0, bad(), " (odd number of dict items)");
    for (std::size_t i = 0; i < items.size(); i += 2) {
      const auto [it, fresh] = d->index.emplace(key_of(items[i]), d->items.size());
      if (fresh) {
        d->items.push_back(items[i]);
        d->items.push_back(items[i + 1]);
      } else {
        d->items[it->second + 1] = items[i + 1];
      }
    }
  }

  Node* make_global(const std::string& module, const std::string& name) {
    const std::string full = module + "." + name;
    const bool known = full == "collections.OrderedDict" || full == "torch._utils._rebuild_tensor_v2" ||
                       full == "torch._utils._rebuild_parameter" ||
                       (module == "torch" && name.size() > 7 && name.compare(name.size() - 7, 7, "Storage") == 0);
    check(known, "'", name_, "' names the global '", full,
          "', which is not one that PyTorch checkpoints use; refusing to load it (tessera never calls a pickle's functions)");
    Node* g = make(Kind::Global);
    g->text = full;
    return g;
  }

  Node* reduce(Node* callable, Node* args) {
    check(callable->kind == Kind::Global && args->kind == Kind::Tuple, bad(), " (REDUCE of a ", kind_name(callable->kind), ")");
    const std::string& f = callable->text;
    const auto& a = args->items;
    if (f == "collections.OrderedDict") {
      check(a.empty(), bad(), " (OrderedDict with arguments)");
      Node* d = make(Kind::Dict);
      d->ordered = true;
      return d;
    }
    if (f == "torch._utils._rebuild_tensor_v2") {
      // (storage, storage_offset, size, stride, requires_grad, backward_hooks[, metadata])
      check((a.size() == 6 || a.size() == 7) && a[0]->kind == Kind::Storage && a[1]->kind == Kind::Int &&
                a[2]->kind == Kind::Tuple && a[3]->kind == Kind::Tuple && a[4]->kind == Kind::Bool,
            bad(), " (unexpected arguments to _rebuild_tensor_v2)");
      check(a[5]->kind == Kind::Dict && a[5]->items.empty(), "'", name_, "': a tensor with backward hooks cannot be loaded");
      TensorRequest r;
      r.storage_type = a[0]->storage_type;
      r.key = a[0]->text;
      r.storage_numel = a[0]->integer;
      r.offset = a[1]->integer;
      r.sizes = ints(a[2], "size");
      r.strides = ints(a[3], "stride");
      Node* t = make(Kind::Tensor);
      t->tensor = build_(r);
      set_requires_grad(t->tensor, a[4]->integer != 0);
      return t;
    }
    if (f == "torch._utils._rebuild_parameter") {  // (tensor, requires_grad, backward_hooks)
      check(a.size() == 3 && a[0]->kind == Kind::Tensor && a[1]->kind == Kind::Bool, bad(),
            " (unexpected arguments to _rebuild_parameter)");
      set_requires_grad(a[0]->tensor, a[1]->integer != 0);
      return a[0];
    }
    fail<Error>("'", name_, "': the global '", f, "' cannot be called");
  }
  static void set_requires_grad(AnyTensor& t, bool on) {
    if (on && t.is_floating_point()) t.visit([](auto& x) { x.requires_grad_(true); });
  }
  std::vector<int64_t> ints(const Node* tuple, const char* what) const {
    std::vector<int64_t> out;
    for (const Node* v : tuple->items) {
      check(v->kind == Kind::Int, bad(), " (a tensor's ", what, " holds a ", kind_name(v->kind), ")");
      out.push_back(v->integer);
    }
    return out;
  }
  // ('storage', torch.<Type>Storage, key, location, numel)
  Node* persistent(Node* pid) {
    const auto& a = pid->items;
    check(pid->kind == Kind::Tuple && a.size() == 5 && a[0]->kind == Kind::String && a[0]->text == "storage" &&
              a[1]->kind == Kind::Global && a[2]->kind == Kind::String && a[3]->kind == Kind::String &&
              a[4]->kind == Kind::Int,
          bad(), " (unexpected persistent id)");
    const std::string& type = a[1]->text;
    check(type.rfind("torch.", 0) == 0 && type.size() > 13, bad(), " (persistent id names '", type, "')");
    const std::string& location = a[3]->text;
    check(location.rfind("cpu", 0) == 0 || location.rfind("cuda", 0) == 0, "'", name_, "': a storage on '", location,
          "' cannot be loaded (tessera loads CPU and CUDA checkpoints onto the CPU)");
    Node* s = make(Kind::Storage);
    s->storage_type = type.substr(6);
    s->text = a[2]->text;
    s->integer = a[4]->integer;
    return s;
  }

  // ----- the result --------------------------------------------------------------------
  // Converts the graph the pickle built into a tree; a pickle may share or
  // even nest values in cycles through its memo, so depth and the total work
  // are bounded.
  PickleValue convert(const Node* v, int depth) {
    check(depth < 100 && budget_-- > 0, "'", name_, "': the pickle's values nest too deeply or are shared too often");
    switch (v->kind) {
      case Kind::None: return PickleValue::None{};
      case Kind::Bool: return v->integer != 0;
      case Kind::Int: return v->integer;
      case Kind::Float: return v->real;
      case Kind::String: return v->text;
      case Kind::Tensor: return v->tensor;
      case Kind::Tuple: case Kind::List: {
        std::vector<PickleValue> items;
        for (const Node* x : v->items) items.push_back(convert(x, depth + 1));
        if (v->kind == Kind::Tuple) return PickleValue::Tuple{std::move(items)};
        return PickleValue::List{std::move(items)};
      }
      case Kind::Dict: {
        PickleValue::Dict d;
        d.ordered = v->ordered;
        for (std::size_t i = 0; i < v->items.size(); i += 2)
          d.items.emplace_back(convert(v->items[i], depth + 1), convert(v->items[i + 1], depth + 1));
        return d;
      }
      default: fail<Error>("'", name_, "': the pickle holds a bare ", kind_name(v->kind), ", which tessera cannot represent");
    }
  }

  const unsigned char* p_;
  std::size_t n_, pos_ = 0;
  std::string name_;
  TensorBuilder build_;
  std::vector<std::unique_ptr<Node>> arena_;
  std::vector<Node*> stack_;
  std::vector<std::size_t> marks_;
  std::unordered_map<uint32_t, Node*> memo_;
  std::size_t budget_ = 0;
};

// Writes a PickleValue as protocol 2, the protocol torch.save uses. Tensors
// become _rebuild_tensor_v2 calls on persistent storages; the StorageNamer
// gives each tensor's storage its record key and type name.
class Pickler {
 public:
  // Where a tensor's data go: its storage's type name ("FloatStorage"),
  // record key and size, and the tensor's geometry in that storage.
  struct StorageId {
    std::string type;
    std::string key;
    int64_t numel = 0;
    int64_t offset = 0;
    Shape sizes;
    Strides strides;
  };
  using StorageNamer = std::function<StorageId(const AnyTensor&)>;

  explicit Pickler(StorageNamer name) : name_(std::move(name)) {}

  std::string dump(const PickleValue& v) {
    out_ = "\x80\x02";
    write(v);
    out_ += '.';
    return std::move(out_);
  }

 private:
  void write(const PickleValue& v) {
    std::visit([&](const auto& x) { write_value(x); }, v.value());
  }
  void write_value(PickleValue::None) { out_ += 'N'; }
  void write_value(bool b) { out_ += b ? '\x88' : '\x89'; }
  void write_value(int64_t i) {
    if (i >= 0 && i < 256) {
      out_ += 'K';
      out_ += static_cast<char>(i);
    } else if (i >= INT32_MIN && i <= INT32_MAX) {
      out_ += 'J';
      append_le<uint32_t>(out_, static_cast<uint32_t>(i));
    } else {
      out_ += '\x8a';
      out_ += '\x08';
      append_le<uint64_t>(out_, static_cast<uint64_t>(i));
    }
  }
  void write_value(double d) {
    uint64_t bits;
    std::memcpy(&bits, &d, 8);
    out_ += 'G';
    for (int k = 7; k >= 0; --k) out_ += static_cast<char>((bits >> (8 * k)) & 0xFF);
  }
  void write_value(const std::string& s) {
    out_ += 'X';
    append_le<uint32_t>(out_, static_cast<uint32_t>(s.size()));
    out_ += s;
  }
  void write_value(const PickleValue::List& l) {
    out_ += ']';
    if (l.items.empty()) return;
    out_ += '(';
    for (const auto& x : l.items) write(x);
    out_ += 'e';
  }
  void write_value(const PickleValue::Tuple& t) {
    out_ += '(';
    for (const auto& x : t.items) write(x);
    out_ += 't';
  }
  void write_value(const PickleValue::Dict& d) {
    if (d.ordered) out_ += "ccollections\nOrderedDict\n)R";
    else out_ += '}';
    if (d.items.empty()) return;
    out_ += '(';
    for (const auto& [k, v] : d.items) write(k), write(v);
    out_ += 'u';
  }
  // _rebuild_tensor_v2(('storage', torch.<Type>, key, 'cpu', numel), offset,
  //                    size, stride, requires_grad, OrderedDict())
  void write_value(const AnyTensor& t) {
    tsr::detail::check(t.defined(), "cannot save an undefined tensor");
    const StorageId id = name_(t);
    out_ += "ctorch._utils\n_rebuild_tensor_v2\n(";
    out_ += "(";
    write_value(std::string("storage"));
    out_ += "ctorch\n" + id.type + "\n";
    write_value(id.key);
    write_value(std::string("cpu"));
    write_value(id.numel);
    out_ += "tQ";
    write_value(id.offset);
    out_ += '(';
    for (int64_t s : id.sizes) write_value(s);
    out_ += "t(";
    for (int64_t s : id.strides) write_value(s);
    out_ += 't';
    write_value(t.requires_grad());
    out_ += "ccollections\nOrderedDict\n)R";
    out_ += "tR";
  }

  StorageNamer name_;
  std::string out_;
};

}  // namespace detail
}  // namespace tsr::io
