package bridge

import (
	"go/ast"
	"go/constant"
	goparser "go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLimitsDeclared checks each row of limitTable whose constant lives in a package this one
// cannot refer to (src set) against that constant's declaration, so the table cannot drift
// from the code that applies the limit. The declaration is found by name in src's non-test
// files (a const block at package level or inside a function).
func TestLimitsDeclared(t *testing.T) {
	for _, l := range limitTable {
		if l.src == "" {
			continue
		}
		_, name, ok := strings.Cut(l.name, ".")
		if !ok {
			t.Errorf("%s: a row with src names its constant as pkg.name", l.name)
			continue
		}
		got, err := declaredConst(filepath.Join("..", filepath.FromSlash(l.src)), name)
		if err != nil {
			t.Errorf("%s: %v (moved? update its row in limits.go)", l.name, err)
			continue
		}
		if got != l.value {
			t.Errorf("%s is %d in %s, limitTable says %d", l.name, got, l.src, l.value)
		}
	}
}

// declaredConst evaluates the constant name declared in the Go package in dir.
func declaredConst(dir, name string) (int64, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	fset := token.NewFileSet()
	consts := map[string]ast.Expr{} // every constant of the package with an explicit value
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := goparser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, 0)
		if err != nil {
			return 0, err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if d, ok := n.(*ast.GenDecl); ok && d.Tok == token.CONST {
				for _, spec := range d.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, id := range vs.Names {
						if i < len(vs.Values) {
							consts[id.Name] = vs.Values[i]
						}
					}
				}
			}
			return true
		})
	}
	expr, ok := consts[name]
	if !ok {
		return 0, errNotDeclared
	}
	v, err := evalConst(expr, consts, 0)
	if err != nil {
		return 0, err
	}
	n, exact := constant.Int64Val(constant.ToInt(v))
	if !exact {
		return 0, errNotInteger
	}
	return n, nil
}

type declError string

func (e declError) Error() string { return string(e) }

const (
	errNotDeclared = declError("not declared there")
	errNotInteger  = declError("not an integer constant")
	errUnsupported = declError("an expression the test cannot evaluate")
)

// evalConst evaluates the integer constant expressions limits are written in: literals,
// + - * / << and parentheses, other constants of the package, and time's units.
func evalConst(e ast.Expr, consts map[string]ast.Expr, depth int) (constant.Value, error) {
	if depth > 20 {
		return nil, errUnsupported
	}
	switch x := e.(type) {
	case *ast.BasicLit:
		return constant.MakeFromLiteral(x.Value, x.Kind, 0), nil
	case *ast.ParenExpr:
		return evalConst(x.X, consts, depth+1)
	case *ast.Ident:
		if d, ok := consts[x.Name]; ok {
			return evalConst(d, consts, depth+1)
		}
	case *ast.SelectorExpr:
		if pkg, ok := x.X.(*ast.Ident); ok && pkg.Name == "time" {
			units := map[string]time.Duration{"Nanosecond": time.Nanosecond, "Microsecond": time.Microsecond,
				"Millisecond": time.Millisecond, "Second": time.Second, "Minute": time.Minute, "Hour": time.Hour}
			if u, ok := units[x.Sel.Name]; ok {
				return constant.MakeInt64(int64(u)), nil
			}
		}
	case *ast.BinaryExpr:
		a, err := evalConst(x.X, consts, depth+1)
		if err != nil {
			return nil, err
		}
		b, err := evalConst(x.Y, consts, depth+1)
		if err != nil {
			return nil, err
		}
		switch x.Op {
		case token.SHL, token.SHR:
			s, ok := constant.Uint64Val(b)
			if !ok {
				return nil, errUnsupported
			}
			return constant.Shift(a, x.Op, uint(s)), nil
		case token.QUO:
			return constant.BinaryOp(a, token.QUO_ASSIGN, b), nil // integer division
		case token.ADD, token.SUB, token.MUL:
			return constant.BinaryOp(a, x.Op, b), nil
		}
	}
	return nil, errUnsupported
}
