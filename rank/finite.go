package rank

import (
	"fmt"
	"math"
	"reflect"
)

// NonFinite is the path of the first NaN or infinite number in v (a
// struct, map, slice or pointer tree of exported fields, as an answer is
// encoded), or "" when every number is finite. A NaN or an infinity in an
// answer is a bug upstream: the encoder would refuse it, and a reader
// could not trust any figure beside it.
func NonFinite(v any) string {
	return nonFinite(reflect.ValueOf(v), "")
}

func nonFinite(v reflect.Value, path string) string {
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		if f := v.Float(); math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Sprintf("%s = %v", path, f)
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return nonFinite(v.Elem(), path)
		}
	case reflect.Struct:
		t := v.Type()
		for i := range v.NumField() {
			if f := t.Field(i); f.IsExported() {
				if p := nonFinite(v.Field(i), path+"."+f.Name); p != "" {
					return p
				}
			}
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			if p := nonFinite(v.MapIndex(k), fmt.Sprintf("%s[%v]", path, k)); p != "" {
				return p
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			if p := nonFinite(v.Index(i), fmt.Sprintf("%s[%d]", path, i)); p != "" {
				return p
			}
		}
	}
	return ""
}
