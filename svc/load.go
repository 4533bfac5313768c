package svc

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// EnvPrefix starts every configuration variable.
const EnvPrefix = "ORDERFLOW_"

// notConfigVars are ORDERFLOW_* variables read elsewhere, not unknown.
var notConfigVars = map[string]bool{
	"ORDERFLOW_CONFIG": true, "ORDERFLOW_FAILPOINTS": true, "ORDERFLOW_API_URL": true,
	"ORDERFLOW_API_ADDR": true, "ORDERFLOW_QUEUE_ADDR": true, // scripts/run.sh's listeners
}

// Load reads the YAML file (if path is not empty and exists), applies
// environment overrides from environ ("KEY=value" pairs) and validates.
// Warnings (unknown variables) are returned for the caller to log.
func Load(path string, environ []string) (Config, []string, error) {
	cfg := Defaults()
	var yamlWarnings []string
	if path != "" {
		b, err := os.ReadFile(path)
		switch {
		case err == nil:
			if yamlWarnings, err = applyYAML(&cfg, path, b); err != nil {
				return cfg, yamlWarnings, err
			}
		case !errors.Is(err, os.ErrNotExist):
			return cfg, nil, fmt.Errorf("config %s: %w", path, err)
		}
	}
	warnings, err := applyEnv(&cfg, environ)
	warnings = append(yamlWarnings, warnings...)
	if err != nil {
		return cfg, warnings, err
	}
	return cfg, warnings, cfg.Validate()
}

// fieldsByEnvName maps ORDERFLOW_<KEY> to the Config field index.
func fieldsByEnvName(v reflect.Value) map[string]int {
	fields := map[string]int{}
	for i := 0; i < v.NumField(); i++ {
		fields[EnvPrefix+strings.ToUpper(v.Type().Field(i).Tag.Get("yaml"))] = i
	}
	return fields
}

// applyYAML reads a flat YAML file through the same parser as the
// environment, so a bad value names its ORDERFLOW_<KEY> either way.
func applyYAML(cfg *Config, path string, b []byte) ([]string, error) {
	var doc map[string]yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	v := reflect.ValueOf(cfg).Elem()
	fields := fieldsByEnvName(v)
	var warnings []string
	for key, node := range doc {
		name := EnvPrefix + strings.ToUpper(key)
		if why, ok := retiredSettings[name]; ok {
			warnings = append(warnings, fmt.Sprintf("setting %s (%s in %s) is retired and ignored: %s", name, key, path, why))
			continue
		}
		i, ok := fields[name]
		if !ok {
			return warnings, fmt.Errorf("config %s: unknown key %q", path, key)
		}
		if err := setField(v.Field(i), node.Value); err != nil {
			return warnings, fmt.Errorf("setting %s (%s: %s in %s): %w", name, key, node.Value, path, err)
		}
	}
	return warnings, nil
}

// retiredSettings were settings once (the first SPEC names
// ORDERFLOW_RECOVERY_INTERVAL); a deployment that still sets one starts, with
// a warning naming what does the job now.
var retiredSettings = map[string]string{
	"ORDERFLOW_RECOVERY_INTERVAL": "the continuous sweep resets stuck claims and re-queues lost tasks every ORDERFLOW_SWEEP_INTERVAL",
}

func applyEnv(cfg *Config, environ []string) ([]string, error) {
	v := reflect.ValueOf(cfg).Elem()
	fields := fieldsByEnvName(v)
	var warnings []string
	for _, kv := range environ {
		name, val, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, EnvPrefix) || notConfigVars[name] ||
			strings.HasPrefix(name, "ORDERFLOW_PAYSIM_") || strings.HasPrefix(name, "ORDERFLOW_TEST_") ||
			strings.HasPrefix(name, "ORDERFLOW_DEV_") {
			continue
		}
		if why, ok := retiredSettings[name]; ok {
			warnings = append(warnings, "setting "+name+" is retired and ignored: "+why)
			continue
		}
		i, ok := fields[name]
		if !ok {
			warnings = append(warnings, "unknown setting "+name+" ignored")
			continue
		}
		if err := setField(v.Field(i), val); err != nil {
			return warnings, fmt.Errorf("setting %s=%q: %w", name, val, err)
		}
	}
	return warnings, nil
}

func setField(f reflect.Value, val string) error {
	switch f.Interface().(type) {
	case Duration:
		d, err := time.ParseDuration(val)
		if err != nil {
			return err
		}
		f.Set(reflect.ValueOf(Duration(d)))
	case int:
		n, err := strconv.Atoi(val)
		if err != nil {
			return fmt.Errorf("not an integer")
		}
		f.SetInt(int64(n))
	case string:
		f.SetString(val)
	default:
		return fmt.Errorf("unsupported type %s", f.Type())
	}
	return nil
}
