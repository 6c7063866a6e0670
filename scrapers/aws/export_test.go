package aws

// ParseMachine exposes parseMachine to the tests as vCPUs, GiB, GB.
func ParseMachine(vcpu, memory, storage string) [3]float64 {
	m := parseMachine(vcpu, memory, storage)
	return [3]float64{m.vcpus, m.ramGiB, m.diskGB}
}
