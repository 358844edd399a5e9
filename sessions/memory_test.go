package sessions

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode"
)

// Every field of the machine is carried by a handover (MachineMemory) or
// named as forgotten, with a reason (machineForgets), and not both: a
// field added to neither fails here, so a handover never drops one by
// accident.
func TestEveryMachineFieldIsCarriedOrForgotten(t *testing.T) {
	carried := map[string]bool{}
	mt := reflect.TypeOf(MachineMemory{})
	for i := range mt.NumField() {
		carried[mt.Field(i).Name] = true
	}
	fields := map[string]bool{}
	typ := reflect.TypeOf(machine{})
	for i := range typ.NumField() {
		name := typ.Field(i).Name
		fields[name] = true
		c := carried[exported(name)]
		_, forgot := machineForgets[name]
		switch {
		case c && forgot:
			t.Errorf("machine.%s is carried (MachineMemory.%s) and listed as forgotten", name, exported(name))
		case !c && !forgot:
			t.Errorf("machine.%s is neither carried by a handover (add MachineMemory.%s, and to memory and restoreMachine) nor listed in machineForgets with why not", name, exported(name))
		}
	}
	for name := range carried {
		if !fields[unexported(name)] {
			t.Errorf("MachineMemory.%s has no machine field %s", name, unexported(name))
		}
	}
	for name := range machineForgets {
		if !fields[name] {
			t.Errorf("machineForgets names %s, which the machine does not have", name)
		}
	}
}

// What memory takes, restoreMachine gives back, every field of it, and
// through the snapshot's JSON under the names older agentd wrote.
func TestMachineMemoryRoundTrip(t *testing.T) {
	var mem MachineMemory
	v := reflect.ValueOf(&mem).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString("x-" + v.Type().Field(i).Name)
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Uint64:
			f.SetUint(uint64(7 + i))
		case reflect.Struct:
			f.Set(reflect.ValueOf(State{Agent: "x", Name: Blocked, Reason: "x.menu"}))
		default:
			t.Fatalf("MachineMemory.%s: a %s, which this test does not fill", v.Type().Field(i).Name, f.Kind())
		}
	}
	m := restoreMachine(mem, false)
	if got := m.memory(); !reflect.DeepEqual(got, mem) {
		t.Errorf("restoreMachine(mem).memory() =\n%+v\nwant\n%+v", got, mem)
	}
	b, err := json.Marshal(SessionSnapshot{ID: "s1", MachineMemory: mem})
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"state":`, `"revision":`, `"promptId":`, `"appearances":`, `"promptSalt":`, `"current":`, `"shown":`, `"inputRaw":`, `"typedAt":`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("the snapshot's JSON has no %s: %s", key, b)
		}
	}
	var back SessionSnapshot
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back.MachineMemory, mem) {
		t.Errorf("through JSON: %+v (%v), want %+v", back.MachineMemory, err, mem)
	}
}

func exported(name string) string   { return string(unicode.ToUpper(rune(name[0]))) + name[1:] }
func unexported(name string) string { return string(unicode.ToLower(rune(name[0]))) + name[1:] }
