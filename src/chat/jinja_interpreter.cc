#include "chat/jinja_interpreter.h"

#include "chat/jinja_builtins.h"

namespace pg::jinja {

// One level of variables. Lookups walk to the parent; assignments stay here.
struct Interpreter::Scope {
  std::vector<std::pair<std::string, Value>> vars;
  std::shared_ptr<Scope> parent;

  Value* Find(const std::string& name) {
    for (auto& [k, v] : vars) {
      if (k == name) return &v;
    }
    return nullptr;
  }
  void Set(const std::string& name, Value v) {
    if (Value* old = Find(name)) {
      *old = std::move(v);
    } else {
      vars.emplace_back(name, std::move(v));
    }
  }
};

namespace {

// Python slice bounds for a sequence of length n.
void SliceIndices(int64_t n, const Value& start, const Value& stop, const Value& step_v, int64_t* lo, int64_t* hi,
                  int64_t* step) {
  auto as_index = [](const Value& v, const char* what) {
    if (!v.is_int() && !v.is_bool()) Fail(std::string("slice ") + what + " must be an integer or none");
    return v.as_int();
  };
  *step = (step_v.is_none() || step_v.is_undefined()) ? 1 : as_index(step_v, "step");
  if (*step == 0) Fail("slice step cannot be zero");
  auto clamp = [&](const Value& v, int64_t dflt) {
    if (v.is_none() || v.is_undefined()) return dflt;
    int64_t i = as_index(v, "index");
    if (i < 0) i += n;
    if (*step > 0) return std::clamp<int64_t>(i, 0, n);
    return std::clamp<int64_t>(i, -1, n - 1);
  };
  *lo = clamp(start, *step > 0 ? 0 : n - 1);
  *hi = clamp(stop, *step > 0 ? n : -1);
}

}  // namespace

bool Contains(const Value& container, const Value& item) {
  switch (container.kind()) {
    case Value::Kind::kString:
      if (!item.is_string()) Fail(std::string("'in <string>' requires string as left operand, not ") + item.TypeName());
      return container.as_string().find(item.as_string()) != std::string::npos;
    case Value::Kind::kList:
      for (const Value& v : container.list()) {
        if (Equals(v, item)) return true;
      }
      return false;
    case Value::Kind::kDict: return item.is_string() && container.dict().Find(item.as_string()) != nullptr;
    case Value::Kind::kUndefined: return false;
    default: Fail(std::string("argument of type '") + container.TypeName() + "' is not iterable");
  }
}

ValueList Iterate(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kList: return v.list();
    case Value::Kind::kDict: {
      if (v.is_namespace()) Fail("'Namespace' object is not iterable");
      ValueList keys;
      for (const auto& [k, val] : v.dict().items) keys.push_back(Value::String(k));
      return keys;
    }
    case Value::Kind::kString: {
      ValueList chars;
      for (char32_t c : DecodeUtf8(v.as_string())) {
        std::string s;
        AppendUtf8(s, c);
        chars.push_back(Value::String(std::move(s)));
      }
      return chars;
    }
    case Value::Kind::kUndefined: return {};
    default: Fail(std::string("'") + v.TypeName() + "' object is not iterable");
  }
}

Interpreter::~Interpreter() {
  // Namespaces may reference themselves (set ns.me = ns); break the cycles.
  for (Value& ns : namespaces_) ns.dict().items.clear();
  while (scope_) scope_ = scope_->parent;
}

std::string Interpreter::Render(const Program& program, const Value& globals) {
  auto global_scope = std::make_shared<Scope>();
  if (globals.is_dict()) global_scope->vars = globals.dict().items;
  scope_ = std::make_shared<Scope>();
  scope_->parent = global_scope;
  std::string out;
  Exec(program.body, out);
  return out;
}

void Interpreter::Step(int64_t n) {
  steps_ += n;
  if (steps_ > limits_.max_steps) {
    Fail("template exceeded its step limit (" + std::to_string(limits_.max_steps) + ")");
  }
}

void Interpreter::ChargeBytes(size_t bytes) {
  if (bytes > limits_.max_output_bytes) {
    Fail("template string exceeds " + std::to_string(limits_.max_output_bytes) + " bytes");
  }
  Step(static_cast<int64_t>(bytes / kBytesPerStep));
}

void Interpreter::CheckListSize(size_t n) const {
  if (n > limits_.max_list_items) Fail("template list exceeds " + std::to_string(limits_.max_list_items) + " items");
}

void Interpreter::Append(std::string& out, const std::string& s) {
  if (out.size() + s.size() > limits_.max_output_bytes) {
    Fail("template output exceeds " + std::to_string(limits_.max_output_bytes) + " bytes");
  }
  Step(static_cast<int64_t>(s.size() / kBytesPerStep));
  out += s;
}

// ---------------------------------------------------------------- statements

Interpreter::Flow Interpreter::Exec(const Body& body, std::string& out) {
  for (const NodePtr& n : body) {
    Flow f = ExecNode(*n, out);
    if (f != Flow::kNormal) return f;
  }
  return Flow::kNormal;
}

Interpreter::Flow Interpreter::ExecNode(const Node& n, std::string& out) {
  Step();
  switch (n.kind) {
    case Node::Kind::kText: Append(out, n.text); break;
    case Node::Kind::kOutput: Append(out, Str(Eval(*n.expr))); break;
    case Node::Kind::kIf:
      for (size_t i = 0; i < n.conditions.size(); ++i) {
        if (Eval(*n.conditions[i]).Truthy()) return Exec(n.bodies[i], out);
      }
      if (n.bodies.size() > n.conditions.size()) return Exec(n.bodies.back(), out);
      break;
    case Node::Kind::kFor: ExecFor(n, out); break;
    case Node::Kind::kSet: ExecSet(n, out); break;
    case Node::Kind::kMacro: DefineMacro(n); break;
    case Node::Kind::kBreak: return Flow::kBreak;
    case Node::Kind::kContinue: return Flow::kContinue;
    case Node::Kind::kFilterBlock: {
      // The filter chain with the captured text as innermost input.
      const Value text = ApplyFilterChain(n.filter.get(), Value::String(Capture(n.bodies[0])));
      Append(out, Str(text));
      break;
    }
  }
  return Flow::kNormal;
}

Value Interpreter::ApplyFilterChain(const Expr* filter, Value v) {
  std::vector<const Expr*> chain;
  for (const Expr* f = filter; f; f = f->args[0].get()) chain.push_back(f);
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    CallArgs args;
    EvalArgs(**it, 1, args);
    v = ApplyFilter(*this, (*it)->name, v, args);
  }
  return v;
}

std::string Interpreter::Capture(const Body& body) {
  std::string buf;
  Exec(body, buf);
  return buf;
}

void Interpreter::ExecFor(const Node& n, std::string& out) {
  ValueList items = Iterate(Eval(*n.expr));
  auto bind_targets = [&](Scope& s, const Value& item) {
    if (n.targets.size() == 1) {
      s.Set(n.targets[0], item);
      return;
    }
    ValueList parts = Iterate(item);
    if (parts.size() != n.targets.size()) {
      Fail(parts.size() < n.targets.size() ? "not enough values to unpack" : "too many values to unpack");
    }
    for (size_t i = 0; i < parts.size(); ++i) s.Set(n.targets[i], parts[i]);
  };
  std::shared_ptr<Scope> outer = scope_;
  if (n.filter) {  // `for x in xs if cond`: the loop sees only accepted items
    ValueList kept;
    for (const Value& item : items) {
      Step();
      scope_ = std::make_shared<Scope>();
      scope_->parent = outer;
      bind_targets(*scope_, item);
      bool keep = Eval(*n.filter).Truthy();
      scope_ = outer;
      if (keep) kept.push_back(item);
    }
    items = std::move(kept);
  }
  if (items.empty()) {
    if (n.bodies.size() > 1) Exec(n.bodies[1], out);
    return;
  }
  // One loop object and one scope serve all iterations (Jinja2 also mutates
  // a single LoopContext); the scope is emptied so assignments never carry
  // over from one iteration to the next.
  const int64_t len = static_cast<int64_t>(items.size());
  auto index = std::make_shared<int64_t>(0);
  Value loop = Value::Dict();
  ValueDict& d = loop.dict();
  d.items.reserve(12);
  d.Set("length", Value::Int(len));
  d.Set("depth", Value::Int(1));
  d.Set("depth0", Value::Int(0));
  d.Set("cycle", Value::Function("cycle", [index](CallArgs& a) {
          if (a.positional.empty()) Fail("no items for cycling given");
          return a.positional[static_cast<size_t>(*index) % a.positional.size()];
        }));
  auto scope = std::make_shared<Scope>();
  scope->parent = outer;
  for (int64_t i = 0; i < len; ++i) {
    Step();
    *index = i;
    scope->vars.clear();
    bind_targets(*scope, items[i]);
    d.Set("index", Value::Int(i + 1));
    d.Set("index0", Value::Int(i));
    d.Set("revindex", Value::Int(len - i));
    d.Set("revindex0", Value::Int(len - i - 1));
    d.Set("first", Value::Bool(i == 0));
    d.Set("last", Value::Bool(i == len - 1));
    d.Set("previtem", i > 0 ? items[i - 1] : Value::Undefined("there is no previous item"));
    d.Set("nextitem", i + 1 < len ? items[i + 1] : Value::Undefined("there is no next item"));
    scope->Set("loop", loop);
    scope_ = scope;
    Flow f;
    try {
      f = Exec(n.bodies[0], out);
    } catch (...) {
      scope_ = outer;
      throw;
    }
    scope_ = outer;
    if (f == Flow::kBreak) break;
  }
}

void Interpreter::ExecSet(const Node& n, std::string& out) {
  Value v;
  if (n.expr) {
    v = Eval(*n.expr);
  } else {
    v = ApplyFilterChain(n.filter.get(), Value::String(Capture(n.bodies[0])));
  }
  if (!n.attr.empty()) {
    Value target = Lookup(n.targets[0]);
    if (!target.is_namespace()) Fail("cannot assign attribute on non-namespace object '" + n.targets[0] + "'");
    target.dict().Set(n.attr, std::move(v));
    return;
  }
  if (n.targets.size() == 1) {
    Assign(n.targets[0], std::move(v));
    return;
  }
  ValueList parts = Iterate(v);
  if (parts.size() != n.targets.size()) {
    Fail(parts.size() < n.targets.size() ? "not enough values to unpack" : "too many values to unpack");
  }
  for (size_t i = 0; i < parts.size(); ++i) Assign(n.targets[i], parts[i]);
}

void Interpreter::DefineMacro(const Node& n) {
  std::weak_ptr<Scope> closure = scope_;
  const Node* node = &n;
  Assign(n.name,
         Value::Function(n.name, [this, node, closure](CallArgs& args) { return CallMacro(*node, closure, args); }));
}

Value Interpreter::CallMacro(const Node& n, const std::weak_ptr<Scope>& closure, CallArgs& args) {
  std::shared_ptr<Scope> parent = closure.lock();
  if (!parent) Fail("macro '" + n.name + "' called outside the scope it was defined in");
  if (args.positional.size() > n.targets.size()) {
    Fail("macro '" + n.name + "' takes not more than " + std::to_string(n.targets.size()) + " argument(s)");
  }
  auto local = std::make_shared<Scope>();
  local->parent = parent;
  for (size_t i = 0; i < n.targets.size(); ++i) {
    const Value* given = args.Get(i, n.targets[i]);
    if (given) {
      local->Set(n.targets[i], *given);
    } else if (n.defaults[i]) {
      std::shared_ptr<Scope> saved = scope_;
      scope_ = local;
      Value d = Eval(*n.defaults[i]);
      scope_ = saved;
      local->Set(n.targets[i], std::move(d));
    } else {
      local->Set(n.targets[i], Value::Undefined("'" + n.targets[i] + "' is undefined"));
    }
  }
  for (const auto& [k, v] : args.keyword) {
    if (std::find(n.targets.begin(), n.targets.end(), k) == n.targets.end()) {
      Fail("macro '" + n.name + "' has no argument named '" + k + "'");
    }
  }
  std::shared_ptr<Scope> saved = scope_;
  scope_ = local;
  std::string buf;
  try {
    Exec(n.bodies[0], buf);
  } catch (...) {
    scope_ = saved;
    throw;
  }
  scope_ = saved;
  return Value::String(std::move(buf));
}

Value Interpreter::Lookup(const std::string& name) const {
  for (Scope* s = scope_.get(); s; s = s->parent.get()) {
    if (Value* v = s->Find(name)) return *v;
  }
  return Value::Undefined("'" + name + "' is undefined");
}

void Interpreter::Assign(const std::string& name, Value v) { scope_->Set(name, std::move(v)); }

Value Interpreter::Call(const Value& fn, CallArgs& args) {
  if (fn.is_undefined()) FailUndefined(fn);
  if (!fn.is_callable()) Fail(std::string("'") + fn.TypeName() + "' object is not callable");
  if (++call_depth_ > limits_.max_call_depth) {
    --call_depth_;
    Fail("template call depth exceeds " + std::to_string(limits_.max_call_depth));
  }
  struct Unwind {
    int* d;
    ~Unwind() { --*d; }
  } unwind{&call_depth_};
  return fn.fn()(args);
}

// ---------------------------------------------------------------- expressions

void Interpreter::EvalArgs(const Expr& e, size_t first, CallArgs& args) {
  for (size_t i = first; i < e.args.size(); ++i) {
    if (e.arg_names[i].empty()) {
      args.positional.push_back(Eval(*e.args[i]));
    } else {
      args.keyword.emplace_back(e.arg_names[i], Eval(*e.args[i]));
    }
  }
}

Value Interpreter::GetAttr(const Value& obj, const std::string& name) {
  if (obj.is_undefined()) FailUndefined(obj);
  if (obj.is_dict() || obj.is_namespace()) {
    if (obj.is_dict()) {
      // Mutating dict methods are unsafe in Jinja's immutable sandbox.
      if (name == "update" || name == "pop" || name == "popitem" || name == "setdefault" || name == "clear") {
        return Value::Undefined("access to attribute '" + name + "' of 'dict' object is unsafe");
      }
      Value m = GetMethod(*this, obj, name);
      if (!m.is_undefined()) return m;
    }
    if (const Value* v = obj.dict().Find(name)) return *v;
    return Value::Undefined(std::string("'") + (obj.is_namespace() ? "Namespace" : "dict") +
                            " object' has no attribute '" + name + "'");
  }
  Value m = GetMethod(*this, obj, name);
  if (!m.is_undefined()) return m;
  return Value::Undefined(std::string("'") + obj.TypeName() + " object' has no attribute '" + name + "'");
}

Value Interpreter::GetItem(const Value& obj, const Value& key) {
  if (obj.is_undefined()) FailUndefined(obj);
  if ((obj.is_list() || obj.is_string()) && (key.is_int() || key.is_bool())) {
    int64_t i = key.as_int();
    if (obj.is_list()) {
      int64_t n = static_cast<int64_t>(obj.list().size());
      if (i < 0) i += n;
      if (i < 0 || i >= n) return Value::Undefined("list object has no element " + std::to_string(key.as_int()));
      return obj.list()[static_cast<size_t>(i)];
    }
    std::u32string s = DecodeUtf8(obj.as_string());
    int64_t n = static_cast<int64_t>(s.size());
    if (i < 0) i += n;
    if (i < 0 || i >= n) return Value::Undefined("string index out of range");
    std::string c;
    AppendUtf8(c, s[static_cast<size_t>(i)]);
    return Value::String(std::move(c));
  }
  if ((obj.is_dict() || obj.is_namespace()) && key.is_string()) {
    if (const Value* v = obj.dict().Find(key.as_string())) return *v;
    return GetAttr(obj, key.as_string());
  }
  if (key.is_string()) return GetAttr(obj, key.as_string());
  return Value::Undefined(std::string("'") + obj.TypeName() + " object' has no item " + Repr(key));
}

Value Interpreter::EvalSlice(const Expr& e) {
  Value target = Eval(*e.args[0]);
  if (target.is_undefined()) FailUndefined(target);
  Value start = e.args[1] ? Eval(*e.args[1]) : Value::None();
  Value stop = e.args[2] ? Eval(*e.args[2]) : Value::None();
  Value step_v = e.args[3] ? Eval(*e.args[3]) : Value::None();
  if (target.is_list()) {
    const ValueList& l = target.list();
    int64_t lo, hi, step;
    SliceIndices(static_cast<int64_t>(l.size()), start, stop, step_v, &lo, &hi, &step);
    ValueList out;
    for (int64_t i = lo; step > 0 ? i < hi : i > hi; i += step) out.push_back(l[static_cast<size_t>(i)]);
    Step(static_cast<int64_t>(out.size()));
    return target.is_tuple() ? Value::Tuple(std::move(out)) : Value::List(std::move(out));
  }
  if (target.is_string()) {
    std::u32string s = DecodeUtf8(target.as_string());
    int64_t lo, hi, step;
    SliceIndices(static_cast<int64_t>(s.size()), start, stop, step_v, &lo, &hi, &step);
    std::u32string out;
    for (int64_t i = lo; step > 0 ? i < hi : i > hi; i += step) out.push_back(s[static_cast<size_t>(i)]);
    ChargeBytes(out.size());
    return Value::String(EncodeUtf8(out));
  }
  Fail(std::string("'") + target.TypeName() + "' object is not subscriptable");
}

Value Interpreter::Eval(const Expr& e) {
  Step();
  switch (e.kind) {
    case Expr::Kind::kLiteral: return e.literal;
    case Expr::Kind::kName: return Lookup(e.name);
    case Expr::Kind::kList:
    case Expr::Kind::kTuple: {
      ValueList items;
      for (const ExprPtr& a : e.args) items.push_back(Eval(*a));
      return e.kind == Expr::Kind::kList ? Value::List(std::move(items)) : Value::Tuple(std::move(items));
    }
    case Expr::Kind::kDict: {
      Value d = Value::Dict();
      for (size_t i = 0; i + 1 < e.args.size(); i += 2) {
        Value k = Eval(*e.args[i]);
        if (!k.is_string()) Fail("only string dict keys are supported, got " + std::string(k.TypeName()));
        d.dict().Set(k.as_string(), Eval(*e.args[i + 1]));
      }
      return d;
    }
    case Expr::Kind::kGetAttr: return GetAttr(Eval(*e.args[0]), e.name);
    case Expr::Kind::kGetItem: {
      Value obj = Eval(*e.args[0]);
      return GetItem(obj, Eval(*e.args[1]));
    }
    case Expr::Kind::kSlice: return EvalSlice(e);
    case Expr::Kind::kCall: {
      Value fn = Eval(*e.args[0]);
      CallArgs args;
      EvalArgs(e, 1, args);
      return Call(fn, args);
    }
    case Expr::Kind::kFilter: {
      Value input = Eval(*e.args[0]);
      CallArgs args;
      EvalArgs(e, 1, args);
      return ApplyFilter(*this, e.name, input, args);
    }
    case Expr::Kind::kTest: {
      Value v = Eval(*e.args[0]);
      CallArgs args;
      EvalArgs(e, 1, args);
      return Value::Bool(ApplyTest(*this, e.name, v, args) != e.negated);
    }
    case Expr::Kind::kUnary: return EvalUnary(e);
    case Expr::Kind::kBinary: return EvalBinary(e);
    case Expr::Kind::kCompare: return EvalCompare(e);
    case Expr::Kind::kCondExpr:
      if (Eval(*e.args[0]).Truthy()) return Eval(*e.args[1]);
      return e.args[2] ? Eval(*e.args[2]) : Value::Undefined("conditional expression has no else branch");
  }
  return Value();
}

}  // namespace pg::jinja
